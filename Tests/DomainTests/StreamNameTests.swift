import Foundation
import XCTest

@testable import Domain

/// Stream names are the keys of the log; one aggregate has exactly one name.
final class StreamNameTests: XCTestCase {
    func testStreamNamesUseLowercaseUUIDsAndFixedPrefixes() {
        XCTAssertEqual(StreamName.user(alice).rawValue, "user-a0000000-0000-4000-8000-00000000000a")
        XCTAssertEqual(StreamName.nickname("ReX").rawValue, "nickname-rex")
        XCTAssertEqual(StreamName.walk(walk1).rawValue, "walk-e0000000-0000-4000-8000-000000000001")
        XCTAssertEqual(
            StreamName.mates(bob, alice).rawValue,
            "mates-a0000000-0000-4000-8000-00000000000a-b0000000-0000-4000-8000-00000000000b"
        )
        XCTAssertEqual(StreamName.mates(alice, bob), .mates(bob, alice))
        XCTAssertEqual(StreamName.walk(walk1).description, StreamName.walk(walk1).rawValue)
    }

    func testParseKnowsTheKinds() throws {
        XCTAssertEqual(StreamName(rawValue: "walk-e0000000-0000-4000-8000-000000000001")?.kind, .walk)
        XCTAssertEqual(StreamName(rawValue: "nickname-rex")?.kind, .nickname)
        XCTAssertNil(StreamName(rawValue: "dog-1"))
        XCTAssertNil(StreamName(rawValue: "user-"))
        let json = try JSONEncoder().encode(StreamName.nickname("rex"))
        XCTAssertEqual(String(decoding: json, as: UTF8.self), #""nickname-rex""#)
        XCTAssertEqual(try JSONDecoder().decode(StreamName.self, from: json), .nickname("rex"))
    }

    func testInitialStateMatchesTheKind() {
        XCTAssertEqual(SniffMeet.initialState(of: .user(alice)), .user(.initial))
        XCTAssertEqual(SniffMeet.initialState(of: .nickname("rex")), .nickname(.initial))
        XCTAssertEqual(SniffMeet.initialState(of: .mates(alice, bob)), .mates(.initial))
        XCTAssertEqual(SniffMeet.initialState(of: .walk(walk1)), .walk(.initial))
    }

    func testEvolveIgnoresEventsOfOtherStreamKinds() {
        let foreign = Event.walkExpired(WalkUpdate(walkID: walk1, from: alice, to: bob, at: t0))
        XCTAssertEqual(SniffMeet.evolve(.user(.initial), foreign), .user(.initial))
        XCTAssertEqual(SniffMeet.evolve(.mates(.initial), foreign), .mates(.initial))
    }
}

/// The handler's view of a decision.
final class DecisionTests: XCTestCase {
    func testDecisionDropsStreamsWithoutEventsAndKeepsOrder() {
        let e = Event.walkExpired(WalkUpdate(walkID: walk1, from: alice, to: bob, at: t0))
        let d = Decision(appends: [.init(stream: .mates(alice, bob), events: []), .init(stream: .walk(walk1), events: [e])])
        XCTAssertEqual(d.appends.map(\.stream), [.walk(walk1)])
        XCTAssertEqual(d.events(for: .walk(walk1)), [e])
        XCTAssertEqual(d.events(for: .user(alice)), [])
        XCTAssertFalse(d.isEmpty)
        XCTAssertTrue(Decision().isEmpty)
    }

    func testCommandNames() {
        XCTAssertEqual(Command.expireWalk(walkID: walk1).name, "ExpireWalk")
        XCTAssertEqual(Command.requestMate(requestID: request1, from: alice, to: bob, dropToken: nil).name, "RequestMate")
    }
}
