import Foundation
import XCTest

@testable import Domain

/// The hand-written JSON of walk_requested gives the encoder's bytes, or steps aside.
final class WalkRequestedJSONTests: XCTestCase {
    func testHandwrittenBytesEqualTheEncodersOnRandomWalks() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.string(from: date))
        }
        let pieces = ["Walk", " ", "\"", "\\", "/", "멍멍", "🐕", "é", "e\u{301}", "'", "{}", "\u{2028}", "\t", "0"]
        var generator = SystemRandomNumberGenerator()
        var handwritten = 0
        for round in 0..<5_000 {
            let message = (0..<Int.random(in: 1...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let places: [String?] = [nil, "Park", "Han \"River\"", "C:\\dogs"]
            // Coordinates as phones send them (up to 7 decimals), integers, tiny and odd values.
            let decimals = Double([1, 10, 1_000, 10_000_000].randomElement(using: &generator)!)
            var latitude = (Double.random(in: -90...90, using: &generator) * decimals).rounded() / decimals
            let longitude = [151, -0.0, 0, 1e-7, 0.1 + 0.2, (Double.random(in: -180...180, using: &generator) * 1e7).rounded() / 1e7]
                .randomElement(using: &generator)!
            if round % 97 == 0 { latitude = 0.000_01 }
            let walk = WalkRequested(
                walkID: UUID(),
                from: UUID(),
                to: UUID(),
                message: message,
                latitude: latitude,
                longitude: longitude,
                placeName: places.randomElement(using: &generator)!,
                createdAt: Timestamp.roundedToMilliseconds(Date()),
                expiresAt: Date(timeIntervalSince1970: 1_800_000_000.5)
            )
            guard let fast = walk.handwrittenJSON() else { continue }
            handwritten += 1
            XCTAssertEqual(String(decoding: fast, as: UTF8.self), String(decoding: try encoder.encode(walk), as: UTF8.self))
            // Each part as the encoder writes it (what the log's edge stores and seals).
            for part in [EventPart.clear, .personal] {
                encoder.userInfo[EventPart.userInfoKey] = part
                XCTAssertEqual(
                    String(decoding: try XCTUnwrap(walk.handwrittenJSON(part)), as: UTF8.self),
                    String(decoding: try encoder.encode(walk), as: UTF8.self)
                )
            }
            encoder.userInfo[EventPart.userInfoKey] = nil
        }
        XCTAssertGreaterThan(handwritten, 1_000, "the common case takes the hand-written path")
    }

    func testValuesTheWriterDoesNotKnowFallBackToTheEncoder() {
        func walk(message: String = "Walk", latitude: Double = 1.5) -> WalkRequested {
            WalkRequested(
                walkID: UUID(),
                from: UUID(),
                to: UUID(),
                message: message,
                latitude: latitude,
                longitude: 2,
                placeName: nil,
                createdAt: Date(),
                expiresAt: Date()
            )
        }
        XCTAssertNotNil(walk().handwrittenJSON())
        XCTAssertNil(walk(latitude: -0.0).handwrittenJSON())
        XCTAssertNil(walk(latitude: 1e-7).handwrittenJSON())
        XCTAssertNil(walk(message: "a\u{2028}b").handwrittenJSON())
        XCTAssertNil(walk(message: "a\nb").handwrittenJSON())
    }
}
