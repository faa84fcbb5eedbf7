import Foundation
import XCTest

@testable import Domain

/// The messages of a conversation: dictionaries whose copies share most of them.
final class ChatMessagesTests: XCTestCase {
    private func message(_ seq: Int) -> ChatState.Message {
        ChatState.Message(from: UUID(), to: UUID(), seq: seq, sentAt: Date(timeIntervalSince1970: Double(seq)))
    }

    /// A copy changed on either side leaves the other as it was, across several folds of the
    /// recent changes into the shared part.
    func testCopiesStayIndependentAcrossFolds() {
        var messages = ChatMessages()
        var ids: [UUID] = []
        var copies: [(ChatMessages, Int)] = []
        for seq in 1...300 {
            let id = UUID()
            ids.append(id)
            messages[id] = message(seq)
            if seq % 37 == 0 { copies.append((messages, seq)) }
        }
        XCTAssertEqual(messages.count, 300)
        XCTAssertEqual(messages[ids[0]]?.seq, 1)
        XCTAssertEqual(messages[ids[299]]?.seq, 300)
        for (copy, upTo) in copies {
            XCTAssertEqual(copy.count, upTo)
            XCTAssertEqual(copy[ids[upTo - 1]]?.seq, upTo)
            XCTAssertNil(copy[ids[upTo]])
        }
        // Changing a copy's message changes only the copy.
        var copy = messages
        copy[ids[5]]?.unsent = true
        XCTAssertEqual(copy[ids[5]]?.unsent, true)
        XCTAssertEqual(messages[ids[5]]?.unsent, false)
        XCTAssertNotEqual(copy, messages)
        messages[ids[5]]?.unsent = true
        XCTAssertEqual(copy, messages)
    }

    /// A message removed stays removed, before and after the recent part is folded.
    func testARemovedMessageStaysRemoved() {
        var messages = ChatMessages()
        let first = UUID()
        messages[first] = message(1)
        for seq in 2...100 { messages[UUID()] = message(seq) }
        messages[first] = nil
        XCTAssertNil(messages[first])
        XCTAssertEqual(messages.count, 99)
        for seq in 101...200 { messages[UUID()] = message(seq) }
        XCTAssertNil(messages[first])
        XCTAssertEqual(messages.count, 199)
        XCTAssertEqual(Set(messages.values.map(\.seq)), Set(2...200))
    }

    func testEqualityIsByContentNotByHowItIsHeld() {
        var built = ChatMessages()
        var plain: [UUID: ChatState.Message] = [:]
        for seq in 1...150 {
            let id = UUID()
            let sent = message(seq)
            built[id] = sent
            plain[id] = sent
        }
        XCTAssertEqual(built, ChatMessages(plain))
    }

    /// Thousands of sends, marks and removals in a scrambled (but fixed) order, checked against a
    /// plain dictionary after each step, with copies taken along the way that must not move.
    func testMatchesAPlainDictionaryThroughEveryMerge() {
        var messages = ChatMessages()
        var plain: [UUID: ChatState.Message] = [:]
        var ids: [UUID] = []
        var snapshots: [(ChatMessages, [UUID: ChatState.Message])] = []
        for step in 1...5_000 {
            // Multiplying by primes scrambles which operation and which message each step takes.
            switch step * 37 % 10 {
            case 0 where !ids.isEmpty:
                let id = ids[step * 7_919 % ids.count]
                messages[id]?.unsent = true
                plain[id]?.unsent = true
            case 1 where !ids.isEmpty:
                let id = ids[step * 6_007 % ids.count]
                messages[id] = nil
                plain[id] = nil
            default:
                let id = UUID()
                ids.append(id)
                let sent = message(step)
                messages[id] = sent
                plain[id] = sent
            }
            let probe = ids[step * 104_729 % ids.count]
            XCTAssertEqual(messages[probe], plain[probe], "step \(step)")
            if step % 500 == 0 { snapshots.append((messages, plain)) }
        }
        XCTAssertEqual(messages, ChatMessages(plain))
        XCTAssertEqual(messages.count, plain.count)
        for (snapshot, expected) in snapshots {
            XCTAssertEqual(snapshot, ChatMessages(expected))
        }
    }

    /// The levels halve in size from the oldest up: a long conversation is held in about
    /// log₂(n / 64) of them, so a send copies a few messages, not the conversation.
    func testALongConversationIsHeldInLogarithmicallyManyLevels() {
        var messages = ChatMessages()
        var most = 0
        for seq in 1...100_000 {
            messages[UUID()] = message(seq)
            most = max(most, messages.levelCount)
        }
        XCTAssertEqual(messages.count, 100_000)
        // log₂(100,000 / 64) ≈ 10.6.
        XCTAssertLessThanOrEqual(most, 12)
        XCTAssertGreaterThan(most, 1)
    }
}
