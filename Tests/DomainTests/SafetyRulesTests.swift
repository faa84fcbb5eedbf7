import Foundation
import XCTest

@testable import Domain

/// Blocks (on the pair stream), reports and suspensions (on the user stream), emptying the inbox.
final class SafetyRulesTests: XCTestCase {
    let report1 = id("F0000000-0000-4000-8000-000000000001")
    let report2 = id("F0000000-0000-4000-8000-000000000002")

    func block(_ by: UUID, _ user: UUID, walks: [UUID] = []) -> Command { .block(by: by, user: user, walks: walks) }

    // MARK: Blocks

    func testBlockUnpairsMatesAndRecordsTheBlock() throws {
        var w = try World.mated()
        let decision = try w.run(block(bob, alice))
        XCTAssertEqual(
            decision.events(for: .mates(alice, bob)),
            [
                .matesUnpaired(MatesUnpaired(by: bob, mate: alice, at: t0)),
                .userBlocked(BlockUpdate(by: bob, blocked: alice, at: t0)),
            ]
        )
        XCTAssertFalse(w.mates.areMates)
        XCTAssertEqual(w.mates.blockedBy, [bob])
    }

    func testBlockWithdrawsAPendingRequestWhicheverWayItWent() throws {
        for blocker in [alice, bob] {
            var w = try World.pending()
            let decision = try w.run(block(blocker, blocker == alice ? bob : alice))
            XCTAssertEqual(
                decision.events(for: .mates(alice, bob)).first,
                .mateRequestCancelled(MateRequestUpdate(requestID: request1, from: alice, to: bob, at: t0))
            )
            XCTAssertEqual(w.mates.requests[request1]?.status, .cancelled)
        }
    }

    func testBlockCancelsThePendingWalksBetweenThem() throws {
        var w = try World.walkPending()
        let decision = try w.run(block(bob, alice, walks: [walk1]))
        XCTAssertEqual(decision.events(for: .walk(walk1)), [.walkCancelled(WalkUpdate(walkID: walk1, from: alice, to: bob, at: t0))])
        XCTAssertEqual(w.walk(walk1).status, .cancelled)
    }

    func testBlockingAgainChangesNothing() throws {
        var w = try World.mated()
        try w.run(block(bob, alice))
        XCTAssertTrue(try w.run(block(bob, alice)).events.isEmpty)
    }

    func testBothMayBlockEachOther() throws {
        var w = try World.mated()
        try w.run(block(bob, alice))
        let decision = try w.run(block(alice, bob))
        XCTAssertEqual(decision.events(for: .mates(alice, bob)), [.userBlocked(BlockUpdate(by: alice, blocked: bob, at: t0))])
        XCTAssertEqual(w.mates.blockedBy, [alice, bob])
    }

    func testBlockingYourselfIsRefused() throws {
        var w = try World.registered()
        assertRefused("validation_failed", field: "user_id") { try w.run(self.block(alice, alice)) }
    }

    func testBlockingSomeoneWhoDoesNotExistWritesNothing() throws {
        var w = try World.registered()
        let decision = try w.run(block(alice, carol))
        XCTAssertTrue(decision.events.isEmpty)
        XCTAssertEqual(decision.appends.map(\.stream), [])
    }

    func testBlockingSomeoneNeverMetWritesNothing() throws {
        var w = try World.registered()
        XCTAssertTrue(try w.run(block(alice, bob)).events.isEmpty)
        XCTAssertEqual(w.mates.blockedBy, [])
    }

    func testABlockedPairsRequestsAreRefusedLikeABadDropTokenEitherWay() throws {
        var w = try World.pending()
        try w.run(.cancelMateRequest(requestID: request1, pair: MatePair(alice, bob), by: alice))
        try w.run(block(bob, alice))
        XCTAssertEqual(w.mates.blockedBy, [bob])
        // Even with a token Bob really handed out, unused and unexpired.
        assertRefused("invalid_drop_token") {
            try w.run(.requestMate(requestID: request2, from: alice, to: bob, dropToken: token(by: bob)))
        }
        assertRefused("invalid_drop_token") {
            try w.run(.requestMate(requestID: request2, from: bob, to: alice, dropToken: token(by: alice)))
        }
    }

    func testNoWalkAcrossABlock() throws {
        var w = try World.mated()
        try w.run(block(alice, bob))
        assertRefused("not_mates") {
            try w.run(.sendWalk(walkID: walk2, from: bob, to: alice, message: "Hi", latitude: 0, longitude: 0, placeName: nil))
        }
    }

    func testUnblockLeavesThemUnpairedAndLetsThemMeetAgain() throws {
        var w = try World.mated()
        try w.run(block(bob, alice))
        let decision = try w.run(.unblock(by: bob, user: alice))
        XCTAssertEqual(decision.events(for: .mates(alice, bob)), [.userUnblocked(BlockUpdate(by: bob, blocked: alice, at: t0))])
        XCTAssertFalse(w.mates.areMates)
        try w.run(.requestMate(requestID: request2, from: alice, to: bob, dropToken: token(by: bob)))
        XCTAssertEqual(w.mates.pendingRequestID, request2)
    }

    func testUnblockingWhomINeverBlockedChangesNothing() throws {
        var w = try World.mated()
        try w.run(block(bob, alice))
        // Alice did not block Bob: her unblock lifts nothing of Bob's.
        XCTAssertTrue(try w.run(.unblock(by: alice, user: bob)).events.isEmpty)
        XCTAssertEqual(w.mates.blockedBy, [bob])
    }

    // MARK: Reports

    func report(_ reporter: UUID, _ reported: UUID, walk: UUID? = nil, note: String? = nil, id: UUID? = nil) -> Command {
        .report(reportID: id ?? report1, reporter: reporter, reported: reported, reason: .harassment, walkID: walk, note: note)
    }

    func testReportIsAnEventOnTheReportedUsersStream() throws {
        var w = try World.walkPending()
        let decision = try w.run(report(bob, alice, walk: walk1, note: "  rude  "))
        XCTAssertEqual(
            decision.events(for: .user(alice)),
            [
                .userReported(
                    UserReported(
                        reportID: report1,
                        reporter: bob,
                        reported: alice,
                        reason: .harassment,
                        walkID: walk1,
                        note: "  rude  ",
                        at: t0
                    )
                )
            ]
        )
        XCTAssertEqual(w.state(.user(alice)).user?.reports, [report1: true])
    }

    func testOnlySomeoneIHaveMetCanBeReported() throws {
        var w = try World.registered()
        // Registered but never met, and nobody at all: the same answer.
        assertRefused("not_found") { try w.run(self.report(alice, bob)) }
        assertRefused("not_found") { try w.run(self.report(alice, carol)) }
        assertRefused("not_found") { try w.run(self.report(alice, alice)) }
        // A request is enough, even one that was declined.
        try w.run(.requestMate(requestID: request1, from: alice, to: bob, dropToken: token(by: bob)))
        try w.run(.declineMate(requestID: request1, pair: MatePair(alice, bob), by: bob))
        try w.run(report(bob, alice))
    }

    func testAReportedWalkMustBeBetweenThem() throws {
        var w = try World.walkPending()
        try w.run(.registerUser(userID: carol, profile: profile(nickname: "Carol")))
        assertRefused("not_found") { try w.run(self.report(bob, alice, walk: walk2)) }
        // A stranger to the walk cannot point at it either.
        try w.run(.requestMate(requestID: request2, from: carol, to: alice, dropToken: token(by: alice)))
        assertRefused("not_found") { try w.run(self.report(carol, alice, walk: walk1)) }
    }

    func testANoteIsAtMost500CharactersOfCleanText() throws {
        var w = try World.pending()
        assertRefused("validation_failed", field: "note") { try w.run(self.report(bob, alice, note: String(repeating: "a", count: 501))) }
        assertRefused("validation_failed", field: "note") { try w.run(self.report(bob, alice, note: "bad\u{0}")) }
        assertRefused("validation_failed", field: "note") { try w.run(self.report(bob, alice, note: "\u{202E}evil")) }
        try w.run(report(bob, alice, note: String(repeating: "멍", count: 500)))
        // An empty note is no note.
        let decision = try w.run(report(bob, alice, note: "", id: report2))
        guard case .userReported(let e) = decision.events.first?.event else { return XCTFail("no report") }
        XCTAssertNil(e.note)
        XCTAssertNil(Event.userReported(e).personalDataOwner)
    }

    func testResolvingAReportTwiceChangesNothing() throws {
        var w = try World.pending()
        try w.run(report(bob, alice))
        let decision = try w.run(.resolveReport(reportID: report1, reported: alice))
        XCTAssertEqual(
            decision.events(for: .user(alice)),
            [.reportResolved(ReportResolved(reportID: report1, reported: alice, at: t0, operator: "admin"))]
        )
        XCTAssertTrue(try w.run(.resolveReport(reportID: report1, reported: alice)).events.isEmpty)
        assertRefused("not_found") { try w.run(.resolveReport(reportID: self.report2, reported: alice)) }
    }

    // MARK: Suspension

    func suspend(_ user: UUID, partners: [UUID] = [], walks: [UUID] = []) -> Command {
        .suspendUser(userID: user, reason: "spam", partners: partners, walks: walks)
    }

    func testSuspensionWithdrawsPendingRequestsAndWalksButKeepsMates() throws {
        var w = try World.walkPending()
        try w.run(.registerUser(userID: carol, profile: profile(nickname: "Carol")))
        try w.run(.requestMate(requestID: request2, from: carol, to: alice, dropToken: token(by: alice)))
        let decision = try w.run(suspend(alice, partners: [bob, carol], walks: [walk1]))
        XCTAssertEqual(
            decision.events(for: .user(alice)),
            [.userSuspended(UserSuspended(userID: alice, reason: "spam", at: t0, operator: "admin"))]
        )
        XCTAssertEqual(
            decision.events(for: .mates(alice, carol)),
            [.mateRequestCancelled(MateRequestUpdate(requestID: request2, from: carol, to: alice, at: t0))]
        )
        XCTAssertEqual(decision.events(for: .mates(alice, bob)), [])
        XCTAssertEqual(w.walk(walk1).status, .cancelled)
        XCTAssertTrue(w.mates.areMates)
        XCTAssertTrue(w.state(.user(alice)).user!.isSuspended)
    }

    func testSuspendingTwiceChangesNothingAndUnsuspendLiftsIt() throws {
        var w = try World.registered()
        try w.run(suspend(alice))
        XCTAssertTrue(try w.run(suspend(alice)).events.isEmpty)
        XCTAssertEqual(
            try w.run(.unsuspendUser(userID: alice)).events(for: .user(alice)),
            [.userUnsuspended(UserUnsuspended(userID: alice, at: t0, operator: "admin"))]
        )
        XCTAssertFalse(w.state(.user(alice)).user!.isSuspended)
        XCTAssertTrue(try w.run(.unsuspendUser(userID: alice)).events.isEmpty)
    }

    func testSuspensionNeedsAUserAndAReason() throws {
        var w = try World.registered()
        assertRefused("user_not_found") { try w.run(self.suspend(carol)) }
        assertRefused("user_not_found") { try w.run(.unsuspendUser(userID: carol)) }
        assertRefused("validation_failed", field: "reason") {
            try w.run(.suspendUser(userID: alice, reason: "", partners: [], walks: []))
        }
    }

    // MARK: Operators

    /// Every operator action names its operator: resolve, suspend and lift each record who acted.
    func testEveryOperatorActionNamesItsOperator() throws {
        var w = try World.pending()
        try w.run(report(bob, alice))
        XCTAssertEqual(
            try w.run(.resolveReport(reportID: report1, reported: alice, by: "mina")).events(for: .user(alice)),
            [.reportResolved(ReportResolved(reportID: report1, reported: alice, at: t0, operator: "mina"))]
        )
        XCTAssertEqual(
            try w.run(.suspendUser(userID: alice, reason: "spam", partners: [], walks: [], by: "jun")).events(for: .user(alice)),
            [.userSuspended(UserSuspended(userID: alice, reason: "spam", at: t0, operator: "jun"))]
        )
        XCTAssertEqual(
            try w.run(.unsuspendUser(userID: alice, by: "mina")).events(for: .user(alice)),
            [.userUnsuspended(UserUnsuspended(userID: alice, at: t0, operator: "mina"))]
        )
    }

    /// Events written before operators had names carry none: they read as operator `admin`.
    func testOlderOperatorEventsReadAsAdmin() {
        XCTAssertEqual(ReportResolved(reportID: report1, reported: alice, at: t0).operatorName, "admin")
        XCTAssertEqual(UserSuspended(userID: alice, reason: "spam", at: t0).operatorName, "admin")
        XCTAssertEqual(UserUnsuspended(userID: alice, at: t0).operatorName, "admin")
        XCTAssertEqual(UserUnsuspended(userID: alice, at: t0, operator: "mina").operatorName, "mina")
    }

    // MARK: Inbox

    func testEmptyingTheInboxIsAnEventOnMyStream() throws {
        var w = try World.registered()
        XCTAssertEqual(
            try w.run(.clearNotifications(userID: alice)).events(for: .user(alice)),
            [.notificationsCleared(UserMoment(userID: alice, at: t0))]
        )
        assertRefused("user_not_found") { try w.run(.clearNotifications(userID: carol)) }
    }
}
