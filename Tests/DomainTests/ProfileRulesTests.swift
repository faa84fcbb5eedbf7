import Foundation
import XCTest

@testable import Domain

/// Rules of the dog profile and the user stream.
final class ProfileRulesTests: XCTestCase {
    func testRegisterRecordsProfileAndReservesNickname() throws {
        var w = World()
        let decision = try w.run(.registerUser(userID: alice, profile: profile(nickname: "Rex")))
        XCTAssertEqual(
            decision.appends.map(\.stream.rawValue),
            ["user-a0000000-0000-4000-8000-00000000000a", "nickname-rex"]
        )
        XCTAssertEqual(
            decision.events(for: .user(alice)),
            [.userRegistered(UserRegistered(userID: alice, profile: profile(nickname: "Rex"), registeredAt: t0))]
        )
        XCTAssertEqual(
            decision.events(for: .nickname("REX")),
            [.nicknameReserved(NicknameClaim(nickname: "rex", userID: alice, at: t0))]
        )
        XCTAssertFalse(decision.consumesDropToken)
        let user = w.state(.user(alice)).user!
        XCTAssertTrue(user.isRegistered)
        XCTAssertEqual(user.nickname, "Rex")
        XCTAssertEqual(user.registeredAt, t0)
    }

    func testDogNameMustBe1To15Characters() throws {
        assertRefused("validation_failed", field: "dog_name") { _ = try profile(dogName: "").validated() }
        assertRefused("validation_failed", field: "dog_name") { _ = try profile(dogName: String(repeating: "x", count: 16)).validated() }
        XCTAssertNoThrow(try profile(dogName: String(repeating: "x", count: 15)).validated())
        // Characters as the user sees them: 15 dog emoji are 15 characters.
        XCTAssertNoThrow(try profile(dogName: String(repeating: "🐕", count: 15)).validated())
        var w = World()
        assertRefused("validation_failed", field: "dog_name") { try w.run(.registerUser(userID: alice, profile: profile(dogName: ""))) }
    }

    func testAgeMustBe0To99() {
        assertRefused("validation_failed", field: "age") { _ = try profile(age: -1).validated() }
        assertRefused("validation_failed", field: "age") { _ = try profile(age: 100).validated() }
        XCTAssertNoThrow(try profile(age: 0).validated())
        XCTAssertNoThrow(try profile(age: 99).validated())
    }

    func testKeywordsMustBeOneOrTwoDistinct() {
        assertRefused("validation_failed", field: "keywords") { _ = try profile(keywords: []).validated() }
        assertRefused("validation_failed", field: "keywords") { _ = try profile(keywords: [.shy, .smart, .friendly]).validated() }
        assertRefused("validation_failed", field: "keywords") { _ = try profile(keywords: [.shy, .shy]).validated() }
        XCTAssertNoThrow(try profile(keywords: [.independent]).validated())
        XCTAssertNoThrow(try profile(keywords: [.energetic, .shy]).validated())
    }

    func testNicknameMustBe2To8Characters() {
        assertRefused("validation_failed", field: "nickname") { _ = try profile(nickname: "R").validated() }
        assertRefused("validation_failed", field: "nickname") { _ = try profile(nickname: "Rexrexrex").validated() }
        XCTAssertNoThrow(try profile(nickname: "Re").validated())
        XCTAssertNoThrow(try profile(nickname: "Rexrexre").validated())
    }

    func testProfileImageIsOptionalButIfPresentMustBe1To200Characters() {
        XCTAssertNoThrow(try profile(profileImage: nil).validated())
        XCTAssertNoThrow(try profile(profileImage: String(repeating: "p", count: 200)).validated())
        assertRefused("validation_failed", field: "profile_image") { _ = try profile(profileImage: "").validated() }
        assertRefused("validation_failed", field: "profile_image") {
            _ = try profile(profileImage: String(repeating: "p", count: 201)).validated()
        }
    }

    func testSexSizeKeywordsSpelledAsInTheAPI() {
        XCTAssertEqual(Sex.allCases.map(\.rawValue), ["male", "female"])
        XCTAssertEqual(Size.allCases.map(\.rawValue), ["small", "medium", "large"])
        XCTAssertEqual(Keyword.allCases.map(\.rawValue), ["energetic", "smart", "friendly", "shy", "independent"])
    }

    func testRegisterSameUserTwiceAlreadyExists() throws {
        var w = try World.registered()
        assertRefused("already_exists") { try w.run(.registerUser(userID: alice, profile: profile(nickname: "Other"))) }
    }

    func testUpdateProfileUnregisteredUserUserNotFound() {
        var w = World()
        assertRefused("user_not_found") { try w.run(.updateProfile(userID: carol, changes: ProfileChanges(age: 4))) }
    }

    func testUpdateProfileRecordsFullNewProfile() throws {
        var w = try World.registered()
        w.now = t0.addingTimeInterval(10)
        let decision = try w.run(.updateProfile(userID: alice, changes: ProfileChanges(age: 4, keywords: [.shy], profileImage: "a.jpg")))
        let expected = profile(nickname: "Alice", age: 4, keywords: [.shy], profileImage: "a.jpg")
        XCTAssertEqual(
            decision.events.map(\.event),
            [.profileUpdated(ProfileUpdated(userID: alice, profile: expected, updatedAt: t0.addingTimeInterval(10)))]
        )
        XCTAssertEqual(w.state(.user(alice)).user?.profile, expected)
        XCTAssertEqual(w.state(.user(alice)).user?.registeredAt, t0)
    }

    func testUpdateProfileCanRemoveProfileImage() throws {
        var w = World()
        try w.run(.registerUser(userID: alice, profile: profile(profileImage: "a.jpg")))
        try w.run(.updateProfile(userID: alice, changes: ProfileChanges(profileImage: .some(nil))))
        XCTAssertNil(w.state(.user(alice)).user?.profile?.profileImage)
    }

    func testUpdateProfileValidatesTheResultingProfile() throws {
        var w = try World.registered()
        assertRefused("validation_failed", field: "age") { try w.run(.updateProfile(userID: alice, changes: ProfileChanges(age: 120))) }
        assertRefused("validation_failed", field: "keywords") {
            try w.run(.updateProfile(userID: alice, changes: ProfileChanges(keywords: [])))
        }
        assertRefused("validation_failed", field: "nickname") {
            try w.run(.updateProfile(userID: alice, changes: ProfileChanges(nickname: "X")))
        }
    }

    func testUpdateProfileWithoutChangeRecordsNothing() throws {
        var w = try World.registered()
        XCTAssertTrue(try w.run(.updateProfile(userID: alice, changes: ProfileChanges())).isEmpty)
        XCTAssertTrue(try w.run(.updateProfile(userID: alice, changes: ProfileChanges(nickname: "Alice", age: 3))).isEmpty)
    }

    func testDeviceTokenMustBeHex64To200() throws {
        func register(_ token: String, _ locale: String? = nil) throws(DomainError) -> DeviceRegistration {
            try DeviceRegistration(token: token, locale: locale)
        }
        for bad in [
            String(repeating: "a", count: 63), "", "xyz", "０１" + String(repeating: "a", count: 62), String(repeating: "a", count: 201),
        ] {
            assertRefused("validation_failed", field: "device_token") { _ = try register(bad) }
        }
        let token = String(repeating: "00ffAA", count: 11)
        XCTAssertEqual(try register(token), try register(token.lowercased(), "ko"))
        XCTAssertEqual(try register(token).token, token.lowercased(), "one device, one token, whatever case the phone sent")
        XCTAssertEqual(try register(String(repeating: "ab", count: 100)).token.count, 200)
    }

    func testDeviceLocaleIsKoOrEnAndKoByDefault() throws {
        let token = String(repeating: "ab", count: 32)
        XCTAssertEqual(try DeviceRegistration(token: token, locale: nil).locale, .ko)
        XCTAssertEqual(try DeviceRegistration(token: token, locale: "en").locale, .en)
        for bad in ["fr", "", "KO", "en-US"] {
            assertRefused("validation_failed", field: "locale") { _ = try DeviceRegistration(token: token, locale: bad) }
        }
    }
}
