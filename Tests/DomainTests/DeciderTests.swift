import Foundation
import XCTest

@testable import Domain

/// The four deciders as `Decider`s: folding from `initial` with `evolve` gives the state
/// `SniffMeet.fold` gives, and each state goes in and out of `StreamState` unchanged.
final class DeciderTests: XCTestCase {
    func testEachDeciderFoldsItsStreamsAsSniffMeetFold() throws {
        var w = try World.walkPending()
        try w.run(.respondWalk(walkID: walk1, by: bob, answer: .accept))
        try w.run(.updateProfile(userID: alice, changes: ProfileChanges(nickname: "Max")))
        try w.run(.dismissNotification(userID: bob, notificationID: walk1))
        try w.run(.recordWalkLog(walkLogID: walkLog1, owner: bob, walkID: walk1, figures: figures(), visibility: .mates))
        try w.run(.changeWalkLogVisibility(walkLogID: walkLog1, by: bob, visibility: .private))
        try w.run(.deleteWalkLog(walkLogID: walkLog1, by: bob))
        try w.run(.sendMessage(messageID: message1, from: bob, to: alice, text: "Hi", photoID: nil))
        try w.run(.unsendMessage(messageID: message1, by: bob, mate: alice))
        try w.run(.unpair(by: alice, mate: bob))
        XCTAssertEqual(Set(w.log.keys.map(\.kind)), Set(StreamName.Kind.allCases))
        for (stream, events) in w.log {
            // Every prefix, so each event's step is compared, not only the end.
            for count in 0...events.count {
                let prefix = Array(events.prefix(count))
                XCTAssertEqual(deciderFold(stream, prefix), SniffMeet.fold(stream, prefix), "\(stream) after \(count) events")
            }
        }
    }

    func testInitialIsTheStateOfAnEmptyStream() {
        XCTAssertEqual(UserDecider.initial.embedded, SniffMeet.initialState(of: .user(alice)))
        XCTAssertEqual(NicknameDecider.initial.embedded, SniffMeet.initialState(of: .nickname("Rex")))
        XCTAssertEqual(MatesDecider.initial.embedded, SniffMeet.initialState(of: .mates(alice, bob)))
        XCTAssertEqual(WalkDecider.initial.embedded, SniffMeet.initialState(of: .walk(walk1)))
        XCTAssertEqual(WalkLogDecider.initial.embedded, SniffMeet.initialState(of: .walkLog(walkLog1)))
        XCTAssertEqual(ChatDecider.initial.embedded, SniffMeet.initialState(of: .chat(alice, bob)))
    }

    func testStatesGoInAndOutOfStreamStateOfTheirKindOnly() throws {
        let w = try World.walkPending()
        let user = try XCTUnwrap(w.state(.user(alice)).user)
        XCTAssertEqual(UserState.extract(from: user.embedded), user)
        XCTAssertNil(UserState.extract(from: w.state(.walk(walk1))))
        let walk = w.walk(walk1)
        XCTAssertEqual(WalkState.extract(from: walk.embedded), walk)
        XCTAssertNil(WalkState.extract(from: user.embedded))
        XCTAssertEqual(MatesState.extract(from: w.mates.embedded), w.mates)
        XCTAssertNil(MatesState.extract(from: NicknameState(holder: alice).embedded))
        XCTAssertEqual(NicknameState.extract(from: NicknameState(holder: alice).embedded), NicknameState(holder: alice))
    }

    func testDecideAtNowUsesTheDefaultContext() throws {
        let w = try World.mated()
        let send = WalkDecider.Command.send(
            walkID: walk1,
            from: alice,
            to: bob,
            message: "Park?",
            latitude: 0,
            longitude: 0,
            placeName: nil
        )
        XCTAssertEqual(
            try WalkDecider.decide(send, w.walk(walk1), now: t0),
            try WalkDecider.decide(send, w.walk(walk1), context: DecisionContext(now: t0, walkTTL: SniffMeet.defaultWalkTTL))
        )
    }

    /// The state of `stream` folded by its own decider, with no `StreamState` in between.
    func deciderFold(_ stream: StreamName, _ events: [Event]) -> StreamState {
        switch stream.kind {
        case .user: UserDecider.fold(events).embedded
        case .nickname: NicknameDecider.fold(events).embedded
        case .mates: MatesDecider.fold(events).embedded
        case .walk: WalkDecider.fold(events).embedded
        case .walkLog: WalkLogDecider.fold(events).embedded
        case .chat: ChatDecider.fold(events).embedded
        }
    }
}
