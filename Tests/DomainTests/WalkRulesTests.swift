import Foundation
import XCTest

@testable import Domain

/// Walk requests: sending to mates, answering once before the deadline, cancelling, expiring.
final class WalkRulesTests: XCTestCase {
    func send(
        _ w: inout World,
        to: UUID = bob,
        message: String = "Park?",
        latitude: Double = 52.52,
        longitude: Double = 13.405,
        placeName: String? = nil,
        walkID: UUID = walk2
    ) throws(DomainError) {
        try w.run(
            .sendWalk(walkID: walkID, from: alice, to: to, message: message, latitude: latitude, longitude: longitude, placeName: placeName)
        )
    }

    func testSendWalkToCurrentMateRecordsRequestWithDeadline() throws {
        var w = try World.mated()
        w.walkTTL = 90
        let command = Command.sendWalk(
            walkID: walk1,
            from: alice,
            to: bob,
            message: "Park?",
            latitude: 52.52,
            longitude: 13.405,
            placeName: nil
        )
        XCTAssertEqual(SniffMeet.streams(for: command, loaded: [:]), [.walk(walk1), .mates(alice, bob)])
        let decision = try w.run(command)
        // Only the walk stream is written; the pair stream is a read condition.
        XCTAssertEqual(decision.appends.map(\.stream), [.walk(walk1)])
        XCTAssertEqual(
            decision.events.map(\.event),
            [
                .walkRequested(
                    WalkRequested(
                        walkID: walk1,
                        from: alice,
                        to: bob,
                        message: "Park?",
                        latitude: 52.52,
                        longitude: 13.405,
                        placeName: nil,
                        createdAt: t0,
                        expiresAt: t0.addingTimeInterval(90)
                    )
                )
            ]
        )
        XCTAssertEqual(w.walk(walk1).status, .pending)
        XCTAssertEqual(w.walk(walk1).expiresAt, t0.addingTimeInterval(90))
    }

    func testWalkTTLDefaultsTo60Seconds() {
        XCTAssertEqual(DecisionContext(now: t0).walkTTL, 60)
        XCTAssertEqual(SniffMeet.defaultWalkTTL, 60)
    }

    func testSendWalkOnlyToCurrentMateNotMates() throws {
        var strangers = try World.registered()
        assertRefused("not_mates") { try send(&strangers) }
        var pending = try World.pending()
        assertRefused("not_mates") { try send(&pending) }
        var unpaired = try World.mated()
        try unpaired.run(.unpair(by: bob, mate: alice))
        assertRefused("not_mates") { try send(&unpaired) }
        var mated = try World.mated()
        assertRefused("not_mates") { try send(&mated, to: alice) }
        assertRefused("not_mates") { try send(&mated, to: carol) }
    }

    func testSendWalkMessage1To100Characters() throws {
        var w = try World.mated()
        assertRefused("validation_failed", field: "message") { try send(&w, message: "") }
        assertRefused("validation_failed", field: "message") { try send(&w, message: String(repeating: "m", count: 101)) }
        XCTAssertNoThrow(try send(&w, message: String(repeating: "m", count: 100)))
    }

    func testSendWalkLatitudeWithinMinus90To90() throws {
        var w = try World.mated()
        assertRefused("validation_failed", field: "latitude") { try send(&w, latitude: 90.0001) }
        assertRefused("validation_failed", field: "latitude") { try send(&w, latitude: -91) }
        assertRefused("validation_failed", field: "latitude") { try send(&w, latitude: .nan) }
        XCTAssertNoThrow(try send(&w, latitude: -90))
    }

    func testSendWalkLongitudeWithinMinus180To180() throws {
        var w = try World.mated()
        assertRefused("validation_failed", field: "longitude") { try send(&w, longitude: 180.5) }
        assertRefused("validation_failed", field: "longitude") { try send(&w, longitude: -.infinity) }
        XCTAssertNoThrow(try send(&w, longitude: 180))
    }

    func testSendWalkPlaceNameOptionalAtMost100Characters() throws {
        var w = try World.mated()
        assertRefused("validation_failed", field: "place_name") { try send(&w, placeName: String(repeating: "p", count: 101)) }
        assertRefused("validation_failed", field: "place_name") { try send(&w, placeName: "") }
        XCTAssertNoThrow(try send(&w, placeName: String(repeating: "p", count: 100)))
    }

    func testSendWalkWalkStreamMustBeNewAlreadyExists() throws {
        var w = try World.walkPending()
        assertRefused("already_exists") { try send(&w, walkID: walk1) }
    }

    func testRespondWalkByAddresseeBeforeDeadline() throws {
        var w = try World.walkPending()
        // The log keeps milliseconds, so decisions see the clock at that precision.
        let lastMoment = Timestamp.roundedToMilliseconds(t0.addingTimeInterval(59.999))
        w.now = lastMoment
        let decision = try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept))
        XCTAssertEqual(decision.events.map(\.event), [.walkAccepted(WalkUpdate(walkID: walk1, from: alice, to: bob, at: lastMoment))])
        XCTAssertEqual(w.walk(walk1).status, .accepted)
        XCTAssertEqual(w.walk(walk1).answeredAt, lastMoment)
        var d = try World.walkPending()
        XCTAssertEqual(try d.run(.respondWalk(walkID: walk1, by: bob, answer: .decline)).events.map(\.event.typeName), ["walk_declined"])
    }

    func testRespondWalkOnlyAddresseeNotAddressee() throws {
        var w = try World.walkPending()
        assertRefused("not_addressee") { try w.run(.respondWalk(walkID: walk1, by: alice, answer: .accept)) }
        assertRefused("not_addressee") { try w.run(.respondWalk(walkID: walk1, by: carol, answer: .accept)) }
    }

    func testRespondWalkUnknownWalkNotFound() throws {
        var w = try World.mated()
        assertRefused("not_found") { try w.run(.respondWalk(walkID: walk2, by: bob, answer: .accept)) }
    }

    func testRespondWalkAtOrAfterDeadlineWalkExpiredEvenBeforeTheJobRan() throws {
        var w = try World.walkPending()
        w.now = t0.addingTimeInterval(60)
        assertRefused("walk_expired") { try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept)) }
    }

    func testRespondWalkAfterExpiredEventWalkExpired() throws {
        var w = try World.walkPending()
        w.now = t0.addingTimeInterval(61)
        try w.run(.expireWalk(walkID: walk1))
        assertRefused("walk_expired") { try w.run(.respondWalk(walkID: walk1, by: bob, answer: .decline)) }
    }

    func testRespondWalkSameAnswerAgainIsNoOp() throws {
        var w = try World.walkPending()
        try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept))
        XCTAssertTrue(try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept)).isEmpty)
        w.now = t0.addingTimeInterval(120)  // the answer stands after the deadline too
        XCTAssertTrue(try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept)).isEmpty)
    }

    func testRespondWalkDifferentAnswerAlreadyAnswered() throws {
        var w = try World.walkPending()
        try w.run(.respondWalk(walkID: walk1, by: bob, answer: .decline))
        assertRefused("already_answered") { try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept)) }
    }

    func testRespondWalkToCancelledWalkAlreadyAnswered() throws {
        var w = try World.walkPending()
        try w.run(.cancelWalk(walkID: walk1, by: alice))
        assertRefused("already_answered") { try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept)) }
    }

    func testCancelWalkBySenderWhilePending() throws {
        var w = try World.walkPending()
        w.now = t0.addingTimeInterval(10)
        let decision = try w.run(.cancelWalk(walkID: walk1, by: alice))
        XCTAssertEqual(
            decision.events.map(\.event),
            [.walkCancelled(WalkUpdate(walkID: walk1, from: alice, to: bob, at: t0.addingTimeInterval(10)))]
        )
        XCTAssertEqual(w.walk(walk1).status, .cancelled)
        // Cancelling again changes nothing.
        XCTAssertTrue(try w.run(.cancelWalk(walkID: walk1, by: alice)).isEmpty)
    }

    func testCancelWalkOnlySenderNotSender() throws {
        var w = try World.walkPending()
        assertRefused("not_sender") { try w.run(.cancelWalk(walkID: walk1, by: bob)) }
        assertRefused("not_sender") { try w.run(.cancelWalk(walkID: walk1, by: carol)) }
    }

    func testCancelWalkUnknownWalkNotFound() throws {
        var w = try World.mated()
        assertRefused("not_found") { try w.run(.cancelWalk(walkID: walk2, by: alice)) }
    }

    func testCancelWalkAfterAnswerAlreadyAnswered() throws {
        var w = try World.walkPending()
        try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept))
        assertRefused("already_answered") { try w.run(.cancelWalk(walkID: walk1, by: alice)) }
    }

    func testCancelWalkPastDeadlineWalkExpired() throws {
        var w = try World.walkPending()
        w.now = t0.addingTimeInterval(60)
        assertRefused("walk_expired") { try w.run(.cancelWalk(walkID: walk1, by: alice)) }
        try w.run(.expireWalk(walkID: walk1))
        assertRefused("walk_expired") { try w.run(.cancelWalk(walkID: walk1, by: alice)) }
    }

    func testExpireWalkOnlyPendingWalksAtOrAfterDeadline() throws {
        var w = try World.walkPending()
        w.now = t0.addingTimeInterval(59)
        XCTAssertTrue(try w.run(.expireWalk(walkID: walk1)).isEmpty, "too early: no-op")
        w.now = t0.addingTimeInterval(75)
        let decision = try w.run(.expireWalk(walkID: walk1))
        // Stamped with the deadline, whenever the job ran.
        XCTAssertEqual(
            decision.events.map(\.event),
            [.walkExpired(WalkUpdate(walkID: walk1, from: alice, to: bob, at: t0.addingTimeInterval(60)))]
        )
        XCTAssertEqual(w.walk(walk1).status, .expired)
        XCTAssertTrue(try w.run(.expireWalk(walkID: walk1)).isEmpty, "twice: no-op")

        var answered = try World.walkPending()
        try answered.run(.respondWalk(walkID: walk1, by: bob, answer: .accept))
        answered.now = t0.addingTimeInterval(120)
        XCTAssertTrue(try answered.run(.expireWalk(walkID: walk1)).isEmpty, "answered: no-op")
        XCTAssertTrue(try answered.run(.expireWalk(walkID: walk2)).isEmpty, "unknown: no-op")
    }

    func testDecisionsKeepMillisecondsOnly() throws {
        var w = try World.mated()
        w.now = Date(timeIntervalSince1970: 1_800_000_000.123456)
        try send(&w, walkID: walk1)
        let event = w.log[.walk(walk1)]![0]
        XCTAssertEqual(try Event.decode(typeName: event.typeName, schemaVersion: 1, data: event.encodedData()), event)
    }
}
