import Foundation
import XCTest

@testable import Domain

/// Walk logs: recording (alone or tied to an accepted walk of the owner), visibility, deleting.
final class WalkLogRulesTests: XCTestCase {
    func record(
        _ w: inout World,
        owner: UUID = alice,
        walkID: UUID? = nil,
        figures f: WalkLogFigures = figures(),
        visibility: WalkLogVisibility = .mates,
        id: UUID = walkLog1
    ) throws(DomainError) {
        try w.run(.recordWalkLog(walkLogID: id, owner: owner, walkID: walkID, figures: f, visibility: visibility))
    }

    func testRecordingAloneWritesWalkLoggedOnItsOwnStream() throws {
        var w = try World.registered()
        let command = Command.recordWalkLog(walkLogID: walkLog1, owner: alice, walkID: nil, figures: figures(), visibility: .private)
        XCTAssertEqual(SniffMeet.streams(for: command, loaded: [:]), [.walkLog(walkLog1)])
        let decision = try w.run(command)
        XCTAssertEqual(
            decision.events.map(\.event),
            [
                .walkLogged(
                    WalkLogged(walkLogID: walkLog1, owner: alice, walkID: nil, figures: figures(), visibility: .private, createdAt: t0)
                )
            ]
        )
        XCTAssertEqual(w.walkLog(walkLog1).visibility, .private)
        XCTAssertTrue(w.walkLog(walkLog1).isLive)
    }

    func testRecordingForAnAcceptedWalkOfMineReadsTheWalkStream() throws {
        var w = try World.walkPending()
        try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept))
        let command = Command.recordWalkLog(walkLogID: walkLog1, owner: bob, walkID: walk1, figures: figures(), visibility: .mates)
        XCTAssertEqual(SniffMeet.streams(for: command, loaded: [:]), [.walkLog(walkLog1), .walk(walk1)])
        let decision = try w.run(command)
        // Only the log's stream is written; the walk stream is a read condition.
        XCTAssertEqual(decision.appends.map(\.stream), [.walkLog(walkLog1)])
        XCTAssertEqual(w.walkLog(walkLog1).logged?.walkID, walk1)
        // The sender may log the same walk too.
        try record(&w, owner: alice, walkID: walk1, id: walkLog2)
    }

    func testRecordingForAWalkNotYetAcceptedIsRefused() throws {
        var w = try World.walkPending()
        assertRefused("validation_failed", field: "walk_id") { try record(&w, owner: alice, walkID: walk1) }
        try w.run(.respondWalk(walkID: walk1, by: bob, answer: .decline))
        assertRefused("validation_failed", field: "walk_id") { try record(&w, owner: alice, walkID: walk1) }
    }

    func testRecordingForSomeoneElsesWalkIsRefused() throws {
        var w = try World.walkPending()
        try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept))
        try w.run(.registerUser(userID: carol, profile: profile(nickname: "Carol")))
        assertRefused("validation_failed", field: "walk_id") { try record(&w, owner: carol, walkID: walk1) }
    }

    func testRecordingForAnUnknownWalkIsRefused() throws {
        var w = try World.registered()
        assertRefused("validation_failed", field: "walk_id") { try record(&w, walkID: walk2) }
        XCTAssertTrue(w.log.isEmpty == false)
        XCTAssertNil(w.log[.walkLog(walkLog1)])
    }

    func testImpossibleFiguresAreRefused() throws {
        var w = try World.registered()
        assertRefused("validation_failed", field: "points") { try record(&w, figures: figures(moving: 3_601)) }
        assertRefused("validation_failed", field: "points") { try record(&w, figures: figures(elapsed: 12 * 3_600 + 1, moving: 0)) }
        assertRefused("validation_failed", field: "points") { try record(&w, figures: figures(distance: .nan)) }
        assertRefused("validation_failed", field: "points") { try record(&w, figures: figures(distance: -1)) }
        assertRefused("validation_failed", field: "points") { try record(&w, figures: figures(points: 1)) }
        assertRefused("validation_failed", field: "points") { try record(&w, figures: figures(points: 20_001)) }
        assertRefused("validation_failed", field: "route") { try record(&w, figures: figures(digest: "AB")) }
        XCTAssertNil(w.log[.walkLog(walkLog1)])
    }

    func testAWalkLogIdIsUsedOnce() throws {
        var w = try World.logged()
        assertRefused("already_exists") { try record(&w) }
    }

    func testTheOwnerChangesVisibility() throws {
        var w = try World.logged()
        let decision = try w.run(.changeWalkLogVisibility(walkLogID: walkLog1, by: alice, visibility: .private))
        XCTAssertEqual(
            decision.events.map(\.event),
            [.walkLogVisibilityChanged(WalkLogVisibilityChanged(walkLogID: walkLog1, owner: alice, visibility: .private, at: t0))]
        )
        XCTAssertEqual(w.walkLog(walkLog1).visibility, .private)
    }

    func testTheSameVisibilityAgainChangesNothing() throws {
        var w = try World.logged()
        XCTAssertTrue(try w.run(.changeWalkLogVisibility(walkLogID: walkLog1, by: alice, visibility: .mates)).isEmpty)
    }

    func testOnlyTheOwnerChangesVisibilityOthersGetNotFound() throws {
        var w = try World.logged()
        assertRefused("not_found") { try w.run(.changeWalkLogVisibility(walkLogID: walkLog1, by: bob, visibility: .private)) }
        assertRefused("not_found") { try w.run(.changeWalkLogVisibility(walkLogID: walkLog2, by: alice, visibility: .private)) }
    }

    func testTheOwnerDeletesAWalkLog() throws {
        var w = try World.logged()
        let decision = try w.run(.deleteWalkLog(walkLogID: walkLog1, by: alice))
        XCTAssertEqual(decision.events.map(\.event), [.walkLogDeleted(WalkLogDeleted(walkLogID: walkLog1, owner: alice, at: t0))])
        XCTAssertFalse(w.walkLog(walkLog1).isLive)
    }

    func testOnlyTheOwnerDeletesOthersGetNotFound() throws {
        var w = try World.logged()
        assertRefused("not_found") { try w.run(.deleteWalkLog(walkLogID: walkLog1, by: bob)) }
        assertRefused("not_found") { try w.run(.deleteWalkLog(walkLogID: walkLog2, by: alice)) }
    }

    func testADeletedWalkLogIsGoneForEveryCommand() throws {
        var w = try World.logged()
        try w.run(.deleteWalkLog(walkLogID: walkLog1, by: alice))
        assertRefused("not_found") { try w.run(.deleteWalkLog(walkLogID: walkLog1, by: alice)) }
        assertRefused("not_found") { try w.run(.changeWalkLogVisibility(walkLogID: walkLog1, by: alice, visibility: .private)) }
        assertRefused("already_exists") { try record(&w) }
    }

    func testWalkLoggedFiguresAreTheOwnersPersonalData() {
        let logged = Event.walkLogged(
            WalkLogged(walkLogID: walkLog1, owner: alice, walkID: nil, figures: figures(), visibility: .mates, createdAt: t0)
        )
        XCTAssertEqual(logged.personalDataOwner, alice)
        let clear = String(decoding: logged.encodedData(.clear), as: UTF8.self)
        XCTAssertFalse(clear.contains("distance_m"))
        XCTAssertFalse(clear.contains("route_digest"))
        XCTAssertNil(Event.walkLogDeleted(WalkLogDeleted(walkLogID: walkLog1, owner: alice, at: t0)).personalDataOwner)
    }
}
