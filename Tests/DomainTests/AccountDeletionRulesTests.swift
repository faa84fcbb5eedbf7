import Foundation
import XCTest

@testable import Domain

/// Deleting an account (`Command.deleteAccount`): the user stream ends, the nickname is free,
/// and every pair and walk the account had a part in is settled in the same decision.
final class AccountDeletionRulesTests: XCTestCase {
    func delete(_ user: UUID, partners: [UUID] = [], walks: [UUID] = []) -> Command {
        .deleteAccount(userID: user, partners: partners, walks: walks)
    }

    func testDeleteAccountWritesUserDeletedAndReleasesTheNickname() throws {
        var w = try World.registered()
        let decision = try w.run(delete(alice))
        XCTAssertEqual(decision.events(for: .user(alice)), [.userDeleted(UserDeleted(userID: alice, at: t0))])
        XCTAssertEqual(
            decision.events(for: .nickname("Alice")),
            [.nicknameReleased(NicknameClaim(nickname: "alice", userID: alice, at: t0))]
        )
        XCTAssertTrue(w.state(.user(alice)).user!.isDeleted)
        XCTAssertNil(w.state(.user(alice)).user!.profile)
    }

    func testDeletedAccountIsUserNotFoundForEverythingAfter() throws {
        var w = try World.registered()
        try w.run(delete(alice))
        assertRefused("user_not_found") { try w.run(self.delete(alice)) }
        assertRefused("user_not_found") { try w.run(.updateProfile(userID: alice, changes: ProfileChanges(dogName: "Max"))) }
        assertRefused("user_not_found") { try w.run(.dismissNotification(userID: alice, notificationID: request1)) }
        // Nor can the stream be registered again.
        assertRefused("already_exists") { try w.run(.registerUser(userID: alice, profile: profile(nickname: "Alice"))) }
    }

    func testDeleteAccountOfNobodyUserNotFound() {
        var w = World()
        assertRefused("user_not_found") { try w.run(self.delete(alice)) }
    }

    func testDeletedNicknameIsFreeAgain() throws {
        var w = try World.registered()
        try w.run(delete(alice))
        try w.run(.registerUser(userID: carol, profile: profile(nickname: "ALICE")))
        XCTAssertEqual(w.state(.nickname("alice")).nickname?.holder, carol)
    }

    func testDeleteAccountUnpairsMates() throws {
        var w = try World.mated()
        let decision = try w.run(delete(bob, partners: [alice]))
        XCTAssertEqual(decision.events(for: .mates(alice, bob)), [.matesUnpaired(MatesUnpaired(by: bob, mate: alice, at: t0))])
        XCTAssertFalse(w.mates.areMates)
        // And a walk to the deleted user is refused from then on.
        assertRefused("not_mates") {
            try w.run(.sendWalk(walkID: walk2, from: alice, to: bob, message: "Hi", latitude: 0, longitude: 0, placeName: nil))
        }
    }

    func testDeleteAccountCancelsAPendingMateRequestWhicheverWayItWent() throws {
        for deleting in [alice, bob] {
            var w = try World.pending()
            let decision = try w.run(delete(deleting, partners: [deleting == alice ? bob : alice]))
            XCTAssertEqual(
                decision.events(for: .mates(alice, bob)),
                [.mateRequestCancelled(MateRequestUpdate(requestID: request1, from: alice, to: bob, at: t0))]
            )
            XCTAssertEqual(w.mates.requests[request1]?.status, .cancelled)
        }
    }

    func testDeleteAccountLeavesASettledPairAsItIs() throws {
        var w = try World.registered()
        let decision = try w.run(delete(alice, partners: [bob, alice, bob]))
        XCTAssertEqual(decision.events(for: .mates(alice, bob)), [])
        XCTAssertEqual(decision.appends.map(\.stream), [.user(alice), .nickname("Alice")])
    }

    func testDeleteAccountCancelsPendingWalksEitherWay() throws {
        for deleting in [alice, bob] {
            var w = try World.walkPending()
            let decision = try w.run(delete(deleting, partners: [deleting == alice ? bob : alice], walks: [walk1]))
            XCTAssertEqual(decision.events(for: .walk(walk1)), [.walkCancelled(WalkUpdate(walkID: walk1, from: alice, to: bob, at: t0))])
            XCTAssertEqual(w.walk(walk1).status, .cancelled)
        }
    }

    func testDeleteAccountLeavesAnsweredOrOverdueWalksAndOthersWalksAlone() throws {
        var answered = try World.walkPending()
        try answered.run(.respondWalk(walkID: walk1, by: bob, answer: .accept))
        XCTAssertEqual(try answered.run(delete(alice, walks: [walk1])).events(for: .walk(walk1)), [])

        var overdue = try World.walkPending()
        overdue.now = t0.addingTimeInterval(61)
        XCTAssertEqual(try overdue.run(delete(alice, walks: [walk1])).events(for: .walk(walk1)), [])

        var stranger = try World.walkPending()
        try stranger.run(.registerUser(userID: carol, profile: profile(nickname: "Carol")))
        XCTAssertEqual(try stranger.run(delete(carol, walks: [walk1])).events(for: .walk(walk1)), [])
    }

    func testEventsOfADeletedUserNameThemForTheProjectors() {
        let walk = WalkUpdate(walkID: walk1, from: alice, to: bob, at: t0)
        XCTAssertEqual(Event.walkAccepted(walk).namedUsers, [alice, bob])
        XCTAssertEqual(Event.userDeleted(UserDeleted(userID: carol, at: t0)).namedUsers, [carol])
        XCTAssertEqual(Event.erased(ErasedEvent(typeName: "walk_requested", owner: bob)).namedUsers, [bob])
        XCTAssertNil(Event.walkAccepted(walk).personalDataOwner)
    }
}
