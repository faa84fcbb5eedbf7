import Foundation
import XCTest

@testable import Domain

/// Nicknames are unique ignoring case and spelling, through the `nickname-<key>` streams.
final class NicknameRulesTests: XCTestCase {
    func testNicknameUniqueIgnoringCaseNicknameTaken() throws {
        var w = World()
        try w.run(.registerUser(userID: alice, profile: profile(nickname: "Rex")))
        assertRefused("nickname_taken") { try w.run(.registerUser(userID: bob, profile: profile(nickname: "rEX"))) }
        XCTAssertNil(w.log[.user(bob)], "a refused sign-up writes nothing")
    }

    func testNicknameReReservingOwnIsNoOp() throws {
        let held = NicknameState(holder: alice)
        XCTAssertEqual(try NicknameDecider.decide(.reserve(nickname: "Rex", user: alice), held, now: t0), [])
        assertRefused("nickname_taken") { _ = try NicknameDecider.decide(.reserve(nickname: "Rex", user: bob), held, now: t0) }
    }

    func testNicknameReleasedCanBeReservedAgain() throws {
        var w = World()
        try w.run(.registerUser(userID: alice, profile: profile(nickname: "Rex")))
        try w.run(.updateProfile(userID: alice, changes: ProfileChanges(nickname: "Max")))
        XCTAssertEqual(w.state(.nickname("rex")).nickname?.holder, nil)
        try w.run(.registerUser(userID: bob, profile: profile(nickname: "REX")))
        XCTAssertEqual(w.state(.nickname("rex")).nickname?.holder, bob)
        XCTAssertEqual(w.log[.nickname("rex")]?.map(\.typeName), ["nickname_reserved", "nickname_released", "nickname_reserved"])
    }

    func testNicknameReleaseByNonHolderIsNoOp() throws {
        XCTAssertEqual(try NicknameDecider.decide(.release(nickname: "rex", user: bob), NicknameState(holder: alice), now: t0), [])
    }

    func testChangingNicknameReleasesOldAndReservesNew() throws {
        var w = World()
        try w.run(.registerUser(userID: alice, profile: profile(nickname: "Rex")))
        let command = Command.updateProfile(userID: alice, changes: ProfileChanges(nickname: "Max"))
        // The handler learns the old nickname's stream only after loading the user stream.
        XCTAssertEqual(SniffMeet.streams(for: command, loaded: [:]), [.user(alice), .nickname("max")])
        XCTAssertEqual(
            SniffMeet.streams(for: command, loaded: [.user(alice): w.state(.user(alice))]),
            [.user(alice), .nickname("rex"), .nickname("max")]
        )
        let decision = try w.run(command)
        XCTAssertEqual(
            decision.events.map(\.stream.rawValue),
            ["user-a0000000-0000-4000-8000-00000000000a", "nickname-rex", "nickname-max"]
        )
        XCTAssertEqual(decision.events.map(\.event.typeName), ["profile_updated", "nickname_released", "nickname_reserved"])
        XCTAssertEqual(w.state(.user(alice)).user?.nickname, "Max")
        XCTAssertEqual(w.state(.nickname("max")).nickname?.holder, alice)
    }

    func testChangingNicknameToTakenOneNicknameTaken() throws {
        var w = try World.registered()
        assertRefused("nickname_taken") { try w.run(.updateProfile(userID: alice, changes: ProfileChanges(nickname: "BOB"))) }
        XCTAssertEqual(w.state(.user(alice)).user?.nickname, "Alice")
    }

    func testChangingOnlyTheCaseOfNicknameKeepsReservation() throws {
        var w = try World.registered()
        let decision = try w.run(.updateProfile(userID: alice, changes: ProfileChanges(nickname: "ALICE")))
        XCTAssertEqual(decision.events.map(\.event.typeName), ["profile_updated"])
        XCTAssertEqual(w.state(.user(alice)).user?.nickname, "ALICE")
        XCTAssertEqual(w.state(.nickname("alice")).nickname?.holder, alice)
    }

    // MARK: The upgrade of nicknames held only in legacy streams

    /// A user registered before nickname streams had keyed names: the keyed stream is empty.
    static func legacyWorld() throws -> World {
        var w = World()
        try w.run(.registerUser(userID: alice, profile: profile(nickname: "Rex")))
        w.log[.nickname("Rex")] = nil
        return w
    }

    func testReclaimNicknameReservesTheUsersNicknameOnItsStream() throws {
        var w = try Self.legacyWorld()
        let command = Command.reclaimNickname(userID: alice)
        // The nickname's stream is known only once the user stream is loaded.
        XCTAssertEqual(SniffMeet.streams(for: command, loaded: [:]), [.user(alice)])
        let decision = try w.run(command)
        XCTAssertEqual(decision.events.map(\.stream), [.nickname("rex")])
        XCTAssertEqual(decision.events.map(\.event.typeName), ["nickname_reserved"])
        XCTAssertEqual(w.state(.nickname("REX")).nickname?.holder, alice)
        // Now a second holder is refused, as for any nickname.
        assertRefused("nickname_taken") { try w.run(.registerUser(userID: bob, profile: profile(nickname: "rex"))) }
    }

    func testReclaimNicknameHeldAlreadyIsNoOp() throws {
        var w = World()
        try w.run(.registerUser(userID: alice, profile: profile(nickname: "Rex")))
        XCTAssertTrue(try w.run(.reclaimNickname(userID: alice)).isEmpty)
        var upgraded = try Self.legacyWorld()
        try upgraded.run(.reclaimNickname(userID: alice))
        XCTAssertTrue(try upgraded.run(.reclaimNickname(userID: alice)).isEmpty, "a second run appends nothing")
    }

    func testReclaimNicknameTakenMeanwhileNicknameTaken() throws {
        var w = try Self.legacyWorld()
        try w.run(.registerUser(userID: bob, profile: profile(nickname: "REX")))
        assertRefused("nickname_taken") { try w.run(.reclaimNickname(userID: alice)) }
        XCTAssertEqual(w.state(.nickname("rex")).nickname?.holder, bob)
    }

    func testReclaimNicknameOfDeletedOrUnknownUserIsNoOp() throws {
        var w = try Self.legacyWorld()
        try w.run(.deleteAccount(userID: alice, partners: [], walks: []))
        w.log[.nickname("Rex")] = nil
        XCTAssertTrue(try w.run(.reclaimNickname(userID: alice)).isEmpty)
        XCTAssertTrue(try w.run(.reclaimNickname(userID: bob)).isEmpty)
        XCTAssertEqual(SniffMeet.streams(for: .reclaimNickname(userID: bob), loaded: [.user(bob): w.state(.user(bob))]), [.user(bob)])
    }

    func testReclaimNicknameReservesTheCurrentNicknameNotAnEarlierOne() throws {
        var w = try Self.legacyWorld()
        try w.run(.updateProfile(userID: alice, changes: ProfileChanges(nickname: "Max")))
        w.log[.nickname("Max")] = nil
        let decision = try w.run(.reclaimNickname(userID: alice))
        XCTAssertEqual(decision.events.map(\.stream), [.nickname("max")])
        XCTAssertEqual(w.state(.nickname("rex")).nickname?.holder, nil)
    }
}
