import Foundation
import XCTest

@testable import Domain

/// Mate requests, drop tokens, answers and unpairing, on the `mates-<lo>-<hi>` stream.
final class MateRulesTests: XCTestCase {
    let pair = MatePair(alice, bob)

    func testDropTokenLivesFiveMinutes() {
        XCTAssertEqual(SniffMeet.dropTokenLifetime, 300)
    }

    func testRequestMateToSelfCannotRequestSelfCheckedBeforeToken() throws {
        var w = try World.registered()
        assertRefused("cannot_request_self") { try w.run(.requestMate(requestID: request1, from: alice, to: alice, dropToken: nil)) }
        assertRefused("cannot_request_self") {
            try w.run(.requestMate(requestID: request1, from: alice, to: alice, dropToken: token(by: alice)))
        }
    }

    func testRequestMateWithoutTokenInvalidDropToken() throws {
        var w = try World.registered()
        assertRefused("invalid_drop_token") { try w.run(.requestMate(requestID: request1, from: alice, to: bob, dropToken: nil)) }
    }

    func testRequestMateTokenHandedOutBySomeoneElseInvalidDropToken() throws {
        var w = try World.registered()
        assertRefused("invalid_drop_token") {
            try w.run(.requestMate(requestID: request1, from: alice, to: bob, dropToken: token(by: carol)))
        }
    }

    func testRequestMateUsedTokenInvalidDropToken() throws {
        var w = try World.registered()
        assertRefused("invalid_drop_token") {
            try w.run(.requestMate(requestID: request1, from: alice, to: bob, dropToken: token(by: bob, used: true)))
        }
    }

    func testRequestMateExpiredTokenDropTokenExpired() throws {
        var w = try World.registered()
        w.now = t0.addingTimeInterval(300)  // exactly at expiry: already expired
        assertRefused("drop_token_expired") {
            try w.run(.requestMate(requestID: request1, from: alice, to: bob, dropToken: token(by: bob)))
        }
        w.now = t0.addingTimeInterval(299.999)
        XCTAssertNoThrow(try w.run(.requestMate(requestID: request1, from: alice, to: bob, dropToken: token(by: bob))))
    }

    func testRequestMateCreatesPendingRequestAndConsumesToken() throws {
        var w = try World.registered()
        let decision = try w.run(.requestMate(requestID: request1, from: alice, to: bob, dropToken: token(by: bob)))
        XCTAssertTrue(decision.consumesDropToken)
        XCTAssertEqual(
            decision.appends,
            [
                .init(
                    stream: .mates(bob, alice),
                    events: [
                        .mateRequested(MateRequestUpdate(requestID: request1, from: alice, to: bob, at: t0))
                    ]
                )
            ]
        )
        XCTAssertEqual(w.mates.status, .pending(requestID: request1, from: alice, to: bob))
        XCTAssertEqual(w.mates.requestIDs, [request1])
        XCTAssertEqual(w.mates.requests[request1]?.status, .pending)
    }

    func testRequestMateRepeatingPendingRequestIsNoOpButConsumesToken() throws {
        var w = try World.pending()
        let decision = try w.run(.requestMate(requestID: request2, from: alice, to: bob, dropToken: token(by: bob)))
        XCTAssertTrue(decision.isEmpty)
        XCTAssertTrue(decision.consumesDropToken)
        XCTAssertEqual(w.mates.status, .pending(requestID: request1, from: alice, to: bob))
    }

    func testRequestMateWhenTheOtherAlreadyAskedMakesMates() throws {
        var w = try World.pending()
        w.now = t0.addingTimeInterval(5)
        let decision = try w.run(.requestMate(requestID: request2, from: bob, to: alice, dropToken: token(by: alice)))
        XCTAssertTrue(decision.consumesDropToken)
        XCTAssertEqual(
            decision.events.map(\.event),
            [
                .mateAccepted(MateAccepted(requestID: request1, from: alice, to: bob, at: t0.addingTimeInterval(5), mutual: true))
            ]
        )
        XCTAssertEqual(w.mates.status, .mates(since: t0.addingTimeInterval(5)))
        XCTAssertEqual(w.mates.requests[request1]?.status, .accepted)
    }

    func testRequestMateWhenAlreadyMatesAlreadyMates() throws {
        var w = try World.mated()
        assertRefused("already_mates") { try w.run(.requestMate(requestID: request2, from: alice, to: bob, dropToken: token(by: bob))) }
        assertRefused("already_mates") { try w.run(.requestMate(requestID: request2, from: bob, to: alice, dropToken: token(by: alice))) }
    }

    func testAcceptMateByAddresseeMakesMates() throws {
        var w = try World.pending()
        let decision = try w.run(.acceptMate(requestID: request1, pair: pair, by: bob))
        XCTAssertEqual(
            decision.events.map(\.event),
            [
                .mateAccepted(MateAccepted(requestID: request1, from: alice, to: bob, at: t0, mutual: false))
            ]
        )
        XCTAssertTrue(w.mates.areMates)
        XCTAssertFalse(decision.consumesDropToken)
    }

    func testAcceptMateOnlyAddresseeNotAddressee() throws {
        var w = try World.pending()
        assertRefused("not_addressee") { try w.run(.acceptMate(requestID: request1, pair: pair, by: alice)) }
        assertRefused("not_addressee") { try w.run(.acceptMate(requestID: request1, pair: pair, by: carol)) }
    }

    func testDeclineMateOnlyAddresseeNotAddressee() throws {
        var w = try World.pending()
        assertRefused("not_addressee") { try w.run(.declineMate(requestID: request1, pair: pair, by: alice)) }
        let decision = try w.run(.declineMate(requestID: request1, pair: pair, by: bob))
        XCTAssertEqual(decision.events.map(\.event), [.mateDeclined(MateRequestUpdate(requestID: request1, from: alice, to: bob, at: t0))])
        XCTAssertEqual(w.mates.status, .none)
        XCTAssertEqual(w.mates.requests[request1]?.status, .declined)
    }

    func testCancelMateRequestOnlyRequesterNotRequester() throws {
        var w = try World.pending()
        assertRefused("not_requester") { try w.run(.cancelMateRequest(requestID: request1, pair: pair, by: bob)) }
        let decision = try w.run(.cancelMateRequest(requestID: request1, pair: pair, by: alice))
        XCTAssertEqual(
            decision.events.map(\.event),
            [.mateRequestCancelled(MateRequestUpdate(requestID: request1, from: alice, to: bob, at: t0))]
        )
        XCTAssertEqual(w.mates.requests[request1]?.status, .cancelled)
    }

    func testAnsweringRequestThatIsNotThePendingOneNotPending() throws {
        var w = try World.pending()
        try w.run(.declineMate(requestID: request1, pair: pair, by: bob))
        assertRefused("not_pending") { try w.run(.acceptMate(requestID: request1, pair: pair, by: bob)) }
        assertRefused("not_pending") { try w.run(.declineMate(requestID: request1, pair: pair, by: bob)) }
        assertRefused("not_pending") { try w.run(.cancelMateRequest(requestID: request1, pair: pair, by: alice)) }
        var m = try World.mated()
        assertRefused("not_pending") { try m.run(.acceptMate(requestID: request1, pair: pair, by: bob)) }
    }

    func testAnsweringUnknownRequestNotFound() throws {
        var w = try World.pending()
        assertRefused("not_found") { try w.run(.acceptMate(requestID: request2, pair: pair, by: bob)) }
        assertRefused("not_found") { try w.run(.declineMate(requestID: request2, pair: pair, by: bob)) }
        assertRefused("not_found") { try w.run(.cancelMateRequest(requestID: request2, pair: pair, by: alice)) }
    }

    func testMatesAreSymmetric() throws {
        XCTAssertEqual(StreamName.mates(alice, bob), StreamName.mates(bob, alice))
        XCTAssertEqual(MatePair(bob, alice), MatePair(alice, bob))
        // Either mate can unpair.
        var w = try World.mated()
        let decision = try w.run(.unpair(by: bob, mate: alice))
        XCTAssertEqual(decision.events.map(\.event), [.matesUnpaired(MatesUnpaired(by: bob, mate: alice, at: t0))])
        XCTAssertFalse(w.mates.areMates)
        var v = try World.mated()
        XCTAssertNoThrow(try v.run(.unpair(by: alice, mate: bob)))
    }

    func testUnpairWhenNotMatesNotMates() throws {
        var w = try World.pending()
        assertRefused("not_mates") { try w.run(.unpair(by: alice, mate: bob)) }
        assertRefused("not_mates") { try w.run(.unpair(by: alice, mate: alice)) }
        var m = try World.mated()
        try m.run(.unpair(by: alice, mate: bob))
        assertRefused("not_mates") { try m.run(.unpair(by: bob, mate: alice)) }
    }

    func testAfterDeclineCancelOrUnpairANewRequestIsPossible() throws {
        var w = try World.pending()
        try w.run(.declineMate(requestID: request1, pair: pair, by: bob))
        try w.run(.requestMate(requestID: request2, from: alice, to: bob, dropToken: token(by: bob)))
        XCTAssertEqual(w.mates.pendingRequestID, request2)
        try w.run(.cancelMateRequest(requestID: request2, pair: pair, by: alice))
        let request3 = id("D0000000-0000-4000-8000-000000000003")
        try w.run(.requestMate(requestID: request3, from: bob, to: alice, dropToken: token(by: alice)))
        try w.run(.acceptMate(requestID: request3, pair: pair, by: alice))
        try w.run(.unpair(by: alice, mate: bob))
        let request4 = id("D0000000-0000-4000-8000-000000000004")
        try w.run(.requestMate(requestID: request4, from: alice, to: bob, dropToken: token(by: bob)))
        XCTAssertEqual(w.mates.requestIDs, [request1, request2, request3, request4])
        XCTAssertEqual(w.mates.status, .pending(requestID: request4, from: alice, to: bob))
    }

    func testRequestMateReusedRequestIDAlreadyExists() throws {
        var w = try World.pending()
        try w.run(.declineMate(requestID: request1, pair: pair, by: bob))
        assertRefused("already_exists") { try w.run(.requestMate(requestID: request1, from: alice, to: bob, dropToken: token(by: bob))) }
    }
}
