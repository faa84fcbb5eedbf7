import Foundation
import XCTest

@testable import Domain

/// Rules every free-text field goes through (`FreeText`): NFC storage, refused characters,
/// lengths in user-perceived characters with a byte cap, nickname comparison and script mixing.
final class FreeTextRulesTests: XCTestCase {
    func testTextIsStoredNFC() throws {
        let nfd = "Jose\u{301}"
        let stored = try profile(dogName: nfd).validated().dogName
        XCTAssertEqual(Array(stored.unicodeScalars), Array("Jos\u{E9}".unicodeScalars))
    }

    func testTextControlCharactersRefusedInEveryField() {
        for bad in ["\u{0}", "\u{7}", "\u{1B}", "\u{7F}", "\u{85}", "\u{9F}", "a\nb", "\t"] {
            assertRefused("validation_failed", field: "nickname") { _ = try profile(nickname: "ab\(bad)").validated() }
            assertRefused("validation_failed", field: "dog_name") { _ = try profile(dogName: "Bo\(bad)").validated() }
            assertRefused("validation_failed", field: "profile_image") { _ = try profile(profileImage: "p\(bad)").validated() }
            var w = try! World.mated()
            assertRefused("validation_failed", field: "message") {
                try w.run(.sendWalk(walkID: walk1, from: alice, to: bob, message: "Park\(bad)", latitude: 1, longitude: 1, placeName: nil))
            }
            assertRefused("validation_failed", field: "place_name") {
                try w.run(.sendWalk(walkID: walk1, from: alice, to: bob, message: "Park", latitude: 1, longitude: 1, placeName: "X\(bad)"))
            }
        }
    }

    func testTextBidiControlsAndUnassignedRefused() {
        for bad in ["\u{202E}", "\u{200F}", "\u{2066}", "\u{061C}", "\u{0378}", "\u{E0080}"] {
            assertRefused("validation_failed", field: "dog_name") { _ = try profile(dogName: "Bo\(bad)ri").validated() }
        }
    }

    func testTextLengthCountsCharactersAsSeen() throws {
        // 15 family emoji are 15 characters but 375 bytes: over the 4-bytes-per-character cap.
        XCTAssertNoThrow(try profile(dogName: String(repeating: "보", count: 15)).validated())
        assertRefused("validation_failed", field: "dog_name") {
            _ = try profile(dogName: String(repeating: "👨‍👩‍👧‍👦", count: 15)).validated()
        }
    }

    func testTextCombiningMarkFloodRefusedByByteCap() {
        let zalgo = "a" + String(repeating: "\u{301}", count: 500)
        XCTAssertEqual(zalgo.count, 1, "one user-perceived character")
        assertRefused("validation_failed", field: "dog_name") { _ = try profile(dogName: zalgo).validated() }
        var w = try! World.mated()
        assertRefused("validation_failed", field: "message") {
            try w.run(.sendWalk(walkID: walk1, from: alice, to: bob, message: zalgo, latitude: 1, longitude: 1, placeName: nil))
        }
    }

    func testNicknameComparedAfterNFKCCaseFolding() {
        XCTAssertEqual(StreamName.nickname("ＡＢ"), StreamName.nickname("ab"))
        XCTAssertEqual(StreamName.nickname("Ab"), StreamName.nickname("ab"))
        XCTAssertEqual(StreamName.nickname("jos\u{E9}"), StreamName.nickname("jose\u{301}"))
        XCTAssertEqual(StreamName.nickname("멍멍"), StreamName.nickname("멍멍".decomposedStringWithCanonicalMapping))
        XCTAssertEqual(StreamName.nickname("a\u{200B}b"), StreamName.nickname("ab"), "invisible characters do not make a new name")
        XCTAssertNotEqual(StreamName.nickname("ab"), StreamName.nickname("ac"))
    }

    func testNicknameAsciiKeepsItsStream() {
        XCTAssertEqual(StreamName.nickname("Rex").rawValue, "nickname-rex")
        XCTAssertEqual(StreamName.nickname("MIA_01").rawValue, "nickname-mia_01")
    }

    func testNicknameFullwidthTwinIsTaken() throws {
        var w = World()
        try w.run(.registerUser(userID: alice, profile: profile(nickname: "ab")))
        assertRefused("nickname_taken") { try w.run(.registerUser(userID: bob, profile: profile(nickname: "ＡＢ"))) }
        assertRefused("nickname_taken") { try w.run(.registerUser(userID: bob, profile: profile(nickname: "Ab"))) }
    }

    func testNicknameLatinMixedWithCyrillicOrGreekRefused() {
        // "pаypal" with a Cyrillic а, "bοb" with a Greek ο.
        assertRefused("validation_failed", field: "nickname") { _ = try profile(nickname: "p\u{430}ypal").validated() }
        assertRefused("validation_failed", field: "nickname") { _ = try profile(nickname: "b\u{3BF}b").validated() }
        XCTAssertNoThrow(try profile(nickname: "\u{431}\u{43E}\u{431}").validated(), "all Cyrillic is one script")
    }

    func testNicknameHangulLatinAndDigitsMixFreely() throws {
        XCTAssertEqual(try profile(nickname: "멍멍이").validated().nickname, "멍멍이")
        XCTAssertEqual(try profile(nickname: "보리").validated().nickname, "보리")
        XCTAssertNoThrow(try profile(nickname: "보리Bo7").validated())
    }

    func testNicknameSpacesRefused() {
        assertRefused("validation_failed", field: "nickname") { _ = try profile(nickname: "a b").validated() }
        assertRefused("validation_failed", field: "nickname") { _ = try profile(nickname: "ab\u{3000}").validated() }
    }

    /// Printable ASCII takes a shortcut past normalization; it must give what the full path gives.
    func testThePrintableASCIIShortcutAgreesWithTheFullRules() throws {
        for byte in UInt8(0x20)..<0x7F {
            let text = "a" + String(UnicodeScalar(byte)) + "Z"
            let folded = text.precomposedStringWithCompatibilityMapping.folding(options: .caseInsensitive, locale: nil)
                .precomposedStringWithCompatibilityMapping
            XCTAssertEqual(FreeText.nicknameKey(text), folded, text)
            XCTAssertEqual(try FreeText.clean(text, field: "f", length: 1...3), text.precomposedStringWithCanonicalMapping)
        }
        XCTAssertThrowsError(try FreeText.clean("abcd", field: "f", length: 1...3))
        XCTAssertThrowsError(try FreeText.clean("", field: "f", length: 1...3))
        XCTAssertThrowsError(try FreeText.clean("a\u{7F}", field: "f", length: 1...3), "DEL is not printable")
    }
}
