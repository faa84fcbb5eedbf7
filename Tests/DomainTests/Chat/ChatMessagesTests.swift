import Domain
import Foundation
import XCTest

/// The messages of a conversation: a dictionary whose copies share most of it.
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
}
