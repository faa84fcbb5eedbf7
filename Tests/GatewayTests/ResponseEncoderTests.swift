import Domain
import EventLog
import Foundation
@testable import Gateway
import XCTest

/// The streaming encoder writes the same JSON values as Foundation's `JSONEncoder` for every
/// kind of answer (compared as parsed values: key order and escaping style may differ).
final class ResponseEncoderTests: XCTestCase {
    func assertSameJSON<T: Encodable>(_ value: T, file: StaticString = #filePath, line: UInt = #line) throws {
        let fast = try ResponseEncoder().encode(value)
        let reference = try JSONEncoder().encode(value)
        let parsedFast = try JSONSerialization.jsonObject(with: fast, options: [.fragmentsAllowed]) as? NSObject
        let parsedReference = try JSONSerialization.jsonObject(with: reference, options: [.fragmentsAllowed]) as? NSObject
        XCTAssertNotNil(parsedFast, file: file, line: line)
        XCTAssertEqual(parsedFast, parsedReference, String(decoding: fast, as: UTF8.self), file: file, line: line)
    }

    let card = CardJSON(userID: UUID(), profile: DogProfile(
        nickname: "Bo \"the\" \\ dog\n\t\u{01}", dogName: "보리 🐕", age: 3, sex: .female, neutered: true,
        size: .small, keywords: [.friendly, .shy], profileImage: nil))

    func testCardsPagesAndNulls() throws {
        try assertSameJSON(card)
        try assertSameJSON(ProfileJSON(card: card, createdAt: Date(timeIntervalSince1970: 1_700_000_000.123)))
        try assertSameJSON(PageJSON(items: [MateJSON(card: card, matesSince: Date()), MateJSON(card: card, matesSince: Date())], nextCursor: nil))
        try assertSameJSON(PageJSON(items: [MateJSON](), nextCursor: "abc"))
    }

    func testWalksAndNotificationsWithNestedObjects() throws {
        let walk = WalkJSON(walkID: UUID(), from: card, to: card, message: "Park? 🌳", latitude: 37.5665, longitude: -126.978,
                            placeName: nil, status: "pending", createdAt: Date(), expiresAt: Date(), answeredAt: nil)
        try assertSameJSON(walk)
        let walkNotice = NotificationJSON(notificationID: UUID(), category: "walk_requested", fromUser: UUID(), fromDogName: "Bo",
                                          requestID: nil, walkID: UUID(), message: "hi", latitude: 1e-7, longitude: 180,
                                          placeName: "Han river", createdAt: Date(), position: LogPosition(transactionID: 1, position: 1))
        try assertSameJSON(walkNotice)
        let mateNotice = NotificationJSON(notificationID: UUID(), category: "mate_requested", fromUser: UUID(), fromDogName: "Bo",
                                          requestID: UUID(), walkID: nil, message: nil, latitude: nil, longitude: nil,
                                          placeName: nil, createdAt: Date(), position: LogPosition(transactionID: 1, position: 2))
        try assertSameJSON(mateNotice)
        try assertSameJSON([walkNotice, mateNotice])
    }

    func testErrorsDictionariesAndScalars() throws {
        try assertSameJSON(APIError.Body(error: .init(code: "validation_failed", message: "age must be 0 to 30", field: "age")))
        try assertSameJSON(APIError.Body(error: .init(code: "unauthorized", message: "no token", field: nil)))
        try assertSameJSON(["b": [1, 2, 3], "a": []])
        try assertSameJSON(["x": Optional<Int>.none, "y": 7])
        try assertSameJSON("plain \u{7f} text")
        try assertSameJSON(Int64.min)
        try assertSameJSON(0.1 + 0.2)
    }

    func testNonFiniteNumbersAreRefused() {
        XCTAssertThrowsError(try ResponseEncoder().encode(["lat": Double.nan]))
        XCTAssertThrowsError(try ResponseEncoder().encode([Double.infinity]))
    }
}
