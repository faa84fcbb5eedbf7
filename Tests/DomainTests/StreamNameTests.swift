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

    /// Names are made byte by byte and pairs ordered by the ids' bytes: both must agree with the
    /// text forms they stand for, for any ids (random ones, and ones equal up to their last byte).
    func testNamesAndPairOrderAgreeWithTheTextForms() {
        var ids = (0..<200).map { _ in UUID() }
        let base = UUID().uuid
        for last in [UInt8(0), 1, 0x7f, 0x80, 0xff] {
            var bytes = base
            bytes.15 = last
            ids.append(UUID(uuid: bytes))
        }
        for (a, b) in zip(ids, ids.shuffled()) {
            let (lo, hi) = a.uuidString.lowercased() <= b.uuidString.lowercased() ? (a, b) : (b, a)
            let pair = MatePair(a, b)
            XCTAssertEqual([pair.lo, pair.hi], [lo, hi])
            let text = "\(lo.uuidString.lowercased())-\(hi.uuidString.lowercased())"
            XCTAssertEqual(StreamName.mates(a, b).rawValue, "mates-" + text)
            XCTAssertEqual(StreamName.chat(b, a).rawValue, "chat-" + text)
            XCTAssertEqual(StreamName.user(a).rawValue, "user-" + a.uuidString.lowercased())
            XCTAssertEqual(StreamName.walkLog(a).rawValue, "walklog-" + a.uuidString.lowercased())
            XCTAssertEqual(StreamName(rawValue: StreamName.mates(a, b).rawValue), .mates(b, a))
            XCTAssertEqual(StreamName(rawValue: StreamName.walk(a).rawValue)?.hashValue, StreamName.walk(a).hashValue)
        }
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
