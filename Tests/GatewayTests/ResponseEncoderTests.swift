import Domain
import EventLog
import Foundation
import JSONText
import XCTest

@testable import Gateway

/// The answer writers produce exactly API.md's objects (compared as parsed values).
final class ResponseEncoderTests: XCTestCase {
    func parsed(_ data: Data, file: StaticString = #filePath, line: UInt = #line) throws -> NSObject {
        let value = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? NSObject
        return try XCTUnwrap(value, String(decoding: data, as: UTF8.self), file: file, line: line)
    }

    func assertWrites(
        _ value: some JSONObjectWritable,
        _ expected: [String: Any],
        file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let data = try ResponseEncoder().encode(value)
        XCTAssertEqual(
            try parsed(data, file: file, line: line),
            expected as NSDictionary,
            String(decoding: data, as: UTF8.self),
            file: file,
            line: line
        )
    }

    let user = UUID()
    let created = Date(timeIntervalSince1970: 1_700_000_000.123)
    var card: CardJSON {
        CardJSON(
            userID: user,
            profile: DogProfile(
                nickname: "Bo \"the\" \\ dog\n\t\u{01}",
                dogName: "보리 🐕",
                age: 3,
                sex: .female,
                neutered: true,
                size: .small,
                keywords: [.friendly, .shy],
                profileImage: nil
            )
        )
    }
    var cardObject: [String: Any] {
        [
            "user_id": user.uuidString.lowercased(), "nickname": "Bo \"the\" \\ dog\n\t\u{01}", "dog_name": "보리 🐕", "age": 3,
            "sex": "female", "neutered": true, "size": "small", "keywords": ["friendly", "shy"], "profile_image": NSNull(),
        ]
    }

    func testCardsProfilesAndPages() throws {
        try assertWrites(card, cardObject)
        try assertWrites(ProfileJSON(card: card, createdAt: created), cardObject.merging(["created_at": "2023-11-14T22:13:20.123Z"]) { $1 })
        let mate = cardObject.merging(["mates_since": "2023-11-14T22:13:20.123Z"]) { $1 }
        try assertWrites(
            PageJSON(items: [MateJSON(card: card, matesSince: created), MateJSON(card: card, matesSince: created)], nextCursor: nil),
            ["items": [mate, mate], "next_cursor": NSNull()]
        )
        try assertWrites(PageJSON(items: [MateJSON](), nextCursor: "abc"), ["items": [Any](), "next_cursor": "abc"])
        let token = "t0k3n"
        try assertWrites(
            SignedUpJSON(userID: user, token: token, profile: ProfileJSON(card: card, createdAt: created)),
            [
                "user_id": user.uuidString.lowercased(), "token": token,
                "profile": cardObject.merging(["created_at": "2023-11-14T22:13:20.123Z"]) { $1 },
            ]
        )
    }

    func testRequestsWalksAndNotifications() throws {
        let id = UUID()
        try assertWrites(
            MateRequestJSON(requestID: id, from: card, to: card, status: "pending", createdAt: created, updatedAt: created),
            [
                "request_id": id.uuidString.lowercased(), "from": cardObject, "to": cardObject, "status": "pending",
                "created_at": "2023-11-14T22:13:20.123Z", "updated_at": "2023-11-14T22:13:20.123Z",
            ]
        )
        try assertWrites(
            WalkJSON(
                walkID: id,
                from: card,
                to: card,
                message: "Park? 🌳",
                latitude: 37.5665,
                longitude: -126.978,
                placeName: nil,
                status: "pending",
                createdAt: created,
                expiresAt: created,
                answeredAt: nil
            ),
            [
                "walk_id": id.uuidString.lowercased(), "from": cardObject, "to": cardObject, "message": "Park? 🌳",
                "latitude": 37.5665, "longitude": -126.978, "place_name": NSNull(), "status": "pending",
                "created_at": "2023-11-14T22:13:20.123Z", "expires_at": "2023-11-14T22:13:20.123Z", "answered_at": NSNull(),
            ]
        )
        let position = LogPosition(transactionID: 1, position: 1)
        try assertWrites(
            NotificationJSON(
                notificationID: id,
                category: "walk_requested",
                fromUser: user,
                fromDogName: "Bo",
                requestID: nil,
                walkID: id,
                message: "hi",
                latitude: 1e-7,
                longitude: 180,
                placeName: "Han river",
                createdAt: created,
                position: position
            ),
            [
                "notification_id": id.uuidString.lowercased(), "category": "walk_requested",
                "from": ["user_id": user.uuidString.lowercased(), "dog_name": "Bo"], "walk_id": id.uuidString.lowercased(),
                "message": "hi", "latitude": 1e-7, "longitude": 180, "place_name": "Han river",
                "created_at": "2023-11-14T22:13:20.123Z",
            ]
        )
        try assertWrites(
            NotificationJSON(
                notificationID: id,
                category: "mate_requested",
                fromUser: user,
                fromDogName: "Bo",
                requestID: id,
                walkID: nil,
                message: nil,
                latitude: nil,
                longitude: nil,
                placeName: nil,
                createdAt: created,
                position: position
            ),
            [
                "notification_id": id.uuidString.lowercased(), "category": "mate_requested",
                "from": ["user_id": user.uuidString.lowercased(), "dog_name": "Bo"], "request_id": id.uuidString.lowercased(),
                "created_at": "2023-11-14T22:13:20.123Z",
            ]
        )
    }

    func testNonFiniteNumbersAreRefused() {
        XCTAssertThrowsError(try ResponseEncoder().encode(["lat": Double.nan]))
        XCTAssertThrowsError(try ResponseEncoder().encode([Double.infinity]))
        let walk = WalkJSON(
            walkID: UUID(),
            from: card,
            to: card,
            message: "m",
            latitude: .nan,
            longitude: 0,
            placeName: nil,
            status: "pending",
            createdAt: created,
            expiresAt: created,
            answeredAt: nil
        )
        XCTAssertThrowsError(try ResponseEncoder().encode(walk))
    }
}
