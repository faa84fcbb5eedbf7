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
}
