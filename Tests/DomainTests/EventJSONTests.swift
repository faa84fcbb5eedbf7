import Foundation
import XCTest

@testable import Domain

/// The hand-written JSON of the busiest commands' events (`EventJSONWriter`) gives the
/// encoder's bytes, whole and part by part, or steps aside.
final class EventJSONTests: XCTestCase {
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.string(from: date))
        }
        return encoder
    }()

    private static let pieces = ["Hi", " ", "\"", "\\", "/", "멍멍", "🐕", "é", "e\u{301}", "'", "{}", "\u{2028}", "\t", "0", "\u{7F}"]

    private func randomText() -> String {
        (0..<Int.random(in: 1...6)).map { _ in Self.pieces.randomElement()! }.joined()
    }

    private func randomDate() -> Date {
        Timestamp.roundedToMilliseconds(Date(timeIntervalSince1970: Double.random(in: 0...4_000_000_000)))
    }

    /// The encoder's bytes of `value` for `part` (nil: the whole event).
    private func encoded<T: Encodable>(_ value: T, _ part: EventPart?) throws -> String {
        encoder.userInfo[EventPart.userInfoKey] = part
        defer { encoder.userInfo[EventPart.userInfoKey] = nil }
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private func text(_ data: Data?) throws -> String { String(decoding: try XCTUnwrap(data), as: UTF8.self) }

    func testMessageSentMatchesTheEncoder() throws {
        var handwritten = 0
        for _ in 0..<3_000 {
            let message = MessageSent(
                messageID: UUID(),
                from: UUID(),
                to: UUID(),
                seq: Int.random(in: 1...1_000_000),
                text: Bool.random() ? randomText() : nil,
                photoID: Bool.random() ? UUID() : nil,
                sentAt: randomDate()
            )
            guard let fast = message.handwrittenJSON() else {
                XCTAssertFalse(EventJSONWriter.isPlain(try XCTUnwrap(message.text)), "only unplain text steps aside")
                continue
            }
            handwritten += 1
            XCTAssertEqual(try text(fast), try encoded(message, nil))
            for part in [EventPart.clear, .personal] {
                XCTAssertEqual(try text(message.handwrittenJSON(part)), try encoded(message, part))
            }
        }
        XCTAssertGreaterThan(handwritten, 1_000, "the common case takes the hand-written path")
    }

    func testMateAndWalkUpdatesMatchTheEncoder() throws {
        for _ in 0..<500 {
            let update = MateRequestUpdate(requestID: UUID(), from: UUID(), to: UUID(), at: randomDate())
            XCTAssertEqual(try text(update.handwrittenJSON()), try encoded(update, nil))
            let accepted = MateAccepted(requestID: UUID(), from: UUID(), to: UUID(), at: randomDate(), mutual: Bool.random())
            XCTAssertEqual(try text(accepted.handwrittenJSON()), try encoded(accepted, nil))
            let walk = WalkUpdate(walkID: UUID(), from: UUID(), to: UUID(), at: randomDate())
            XCTAssertEqual(try text(walk.handwrittenJSON()), try encoded(walk, nil))
        }
    }

    func testNicknameClaimMatchesTheEncoder() throws {
        var handwritten = 0
        for _ in 0..<1_000 {
            let claim = NicknameClaim(nickname: randomText(), userID: UUID(), at: randomDate())
            guard let fast = claim.handwrittenJSON() else { continue }
            handwritten += 1
            XCTAssertEqual(try text(fast), try encoded(claim, nil))
            for part in [EventPart.clear, .personal] {
                XCTAssertEqual(try text(claim.handwrittenJSON(part)), try encoded(claim, part))
            }
        }
        XCTAssertGreaterThan(handwritten, 300)
    }

    private func randomProfile() -> DogProfile {
        DogProfile(
            nickname: randomText(),
            dogName: randomText(),
            age: Int.random(in: 0...99),
            sex: Sex.allCases.randomElement()!,
            neutered: Bool.random(),
            size: Size.allCases.randomElement()!,
            keywords: Array(Keyword.allCases.shuffled().prefix(Int.random(in: 1...2))),
            profileImage: Bool.random() ? randomText() : nil
        )
    }

    func testSignUpAndProfileEventsMatchTheEncoder() throws {
        var handwritten = 0
        for _ in 0..<2_000 {
            let registered = UserRegistered(userID: UUID(), profile: randomProfile(), registeredAt: randomDate())
            let updated = ProfileUpdated(userID: UUID(), profile: randomProfile(), updatedAt: randomDate())
            if let fast = registered.handwrittenJSON() {
                handwritten += 1
                XCTAssertEqual(try text(fast), try encoded(registered, nil))
                for part in [EventPart.clear, .personal] {
                    XCTAssertEqual(try text(registered.handwrittenJSON(part)), try encoded(registered, part))
                }
            }
            // The clear part never holds the profile: always written by hand.
            XCTAssertEqual(try text(updated.handwrittenJSON(.clear)), try encoded(updated, .clear))
            if let fast = updated.handwrittenJSON() {
                XCTAssertEqual(try text(fast), try encoded(updated, nil))
                XCTAssertEqual(try text(updated.handwrittenJSON(.personal)), try encoded(updated, .personal))
            }
        }
        XCTAssertGreaterThan(handwritten, 100, "the common case takes the hand-written path")
    }

    func testUnplainTextStepsAside() {
        let message = MessageSent(messageID: UUID(), from: UUID(), to: UUID(), seq: 1, text: "a\nb", photoID: nil, sentAt: Date())
        XCTAssertNil(message.handwrittenJSON())
        XCTAssertNil(NicknameClaim(nickname: "a\u{2028}", userID: UUID(), at: Date()).handwrittenJSON())
        // Through the event: the encoder's bytes all the same.
        XCTAssertEqual(
            String(decoding: Event.messageSent(message).encodedData(), as: UTF8.self),
            try encoded(message, nil)
        )
    }
}
