import Foundation
import XCTest

@testable import Domain

/// Old JSON in the log is brought up to the current schema when read, never rewritten.
final class EventUpcastingTests: XCTestCase {
    func testUserRegisteredVersion0WithSingleKeywordIsUpcastToKeywordsArray() throws {
        let v0 =
            #"{"profile":{"age":3,"dog_name":"Bello","keyword":"shy","neutered":true,"nickname":"Rex","profile_image":null,"sex":"male","size":"medium"},"registered_at":"2027-01-15T08:00:00.000Z","user_id":"a0000000-0000-4000-8000-00000000000a"}"#
        let event = try Event.decode(typeName: "user_registered", schemaVersion: 0, data: Data(v0.utf8))
        XCTAssertEqual(event, .userRegistered(UserRegistered(userID: alice, profile: profile(keywords: [.shy]), registeredAt: t0)))
        // Written again, it is current JSON.
        XCTAssertEqual(event.schemaVersion, 1)
        XCTAssertTrue(String(decoding: event.encodedData(), as: UTF8.self).contains(#""keywords":["shy"]"#))
    }

    func testOlderVersionWithoutUpcasterThrows() {
        XCTAssertThrowsError(try Event.decode(typeName: "walk_accepted", schemaVersion: 0, data: Data("{}".utf8))) {
            XCTAssertEqual($0 as? EventDecodingError, .unsupportedSchemaVersion(typeName: "walk_accepted", version: 0))
        }
    }
}
