import Foundation
import XCTest

@testable import Domain

let message1 = id("F0000000-0000-4000-8000-000000000001")
let message2 = id("F0000000-0000-4000-8000-000000000002")
let photo1 = id("F1000000-0000-4000-8000-000000000001")

/// Chat between mates: sending only between current mates (checked on the pair stream, read but
/// not written), `seq` without gaps, editing within 15 minutes by the sender, unsending.
final class ChatRulesTests: XCTestCase {
    @discardableResult
    func send(
        _ w: inout World,
        from: UUID = alice,
        to: UUID = bob,
        text: String? = "Running late",
        photoID: UUID? = nil,
        messageID: UUID = message1
    ) throws(DomainError) -> Decision {
        try w.run(.sendMessage(messageID: messageID, from: from, to: to, text: text, photoID: photoID))
    }

    func chat(_ w: World) -> ChatState { w.state(.chat(alice, bob)).chat! }

    func testChatStreamIsNamedByThePairInEitherOrder() {
        XCTAssertEqual(StreamName.chat(bob, alice), StreamName.chat(alice, bob))
        XCTAssertEqual(
            StreamName.chat(alice, bob).rawValue,
            "chat-a0000000-0000-4000-8000-00000000000a-b0000000-0000-4000-8000-00000000000b"
        )
        XCTAssertEqual(StreamName(rawValue: StreamName.chat(alice, bob).rawValue)?.kind, .chat)
        XCTAssertEqual(SniffMeet.initialState(of: .chat(alice, bob)), .chat(.initial))
    }

    func testSendMessageToCurrentMateAppendsSeqOneOnTheChatStreamOnly() throws {
        var w = try World.mated()
        let command = Command.sendMessage(messageID: message1, from: alice, to: bob, text: "Running late", photoID: nil)
        XCTAssertEqual(SniffMeet.streams(for: command, loaded: [:]), [.chat(alice, bob), .mates(alice, bob)])
        let decision = try w.run(command)
        // The pair stream is a read condition, never written.
        XCTAssertEqual(decision.appends.map(\.stream), [.chat(alice, bob)])
        XCTAssertEqual(
            decision.events.map(\.event),
            [.messageSent(MessageSent(messageID: message1, from: alice, to: bob, seq: 1, text: "Running late", photoID: nil, sentAt: t0))]
        )
        XCTAssertEqual(chat(w).lastSeq, 1)
    }

    func testSeqCountsMessagesOfBothSidesWithoutGaps() throws {
        var w = try World.mated()
        try send(&w, messageID: message1)
        try send(&w, from: bob, to: alice, text: "ok", messageID: message2)
        try w.run(.editMessage(messageID: message1, by: alice, mate: bob, text: "Running very late"))
        try w.run(.unsendMessage(messageID: message2, by: bob, mate: alice))
        let third = id("F0000000-0000-4000-8000-000000000003")
        let decision = try send(&w, messageID: third)
        // Edits and unsends are not messages: the next message is 3, after 1 and 2.
        guard case .messageSent(let sent) = decision.events.first?.event else { return XCTFail("no message") }
        XCTAssertEqual(sent.seq, 3)
        XCTAssertEqual(chat(w).messages.values.map(\.seq).sorted(), [1, 2, 3])
    }

    func testSendMessageOnlyToCurrentMateNotMates() throws {
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
        XCTAssertTrue(mated.log[.chat(alice, bob)] == nil)
    }

    func testSendMessageAfterEitherBlockedNotMates() throws {
        var blockedByBob = try World.mated()
        try blockedByBob.run(.block(by: bob, user: alice, walks: []))
        assertRefused("not_mates") { try send(&blockedByBob) }
        assertRefused("not_mates") { try send(&blockedByBob, from: bob, to: alice) }
        var blockedByAlice = try World.mated()
        try blockedByAlice.run(.block(by: alice, user: bob, walks: []))
        assertRefused("not_mates") { try send(&blockedByAlice, from: bob, to: alice) }
    }

    func testPairingAgainContinuesTheConversation() throws {
        var w = try World.mated()
        try send(&w, messageID: message1)
        try w.run(.unpair(by: alice, mate: bob))
        assertRefused("not_mates") { try send(&w, messageID: message2) }
        try w.run(.requestMate(requestID: request2, from: bob, to: alice, dropToken: token(by: alice)))
        try w.run(.acceptMate(requestID: request2, pair: MatePair(alice, bob), by: alice))
        let decision = try send(&w, messageID: message2)
        guard case .messageSent(let sent) = decision.events.first?.event else { return XCTFail("no message") }
        XCTAssertEqual(sent.seq, 2)
    }

    func testSendMessageNeedsTextOrPhoto() throws {
        var w = try World.mated()
        assertRefused("validation_failed", field: "text") { try send(&w, text: nil, photoID: nil) }
        let photoOnly = try send(&w, text: nil, photoID: photo1)
        guard case .messageSent(let sent) = photoOnly.events.first?.event else { return XCTFail("no message") }
        XCTAssertNil(sent.text)
        XCTAssertEqual(sent.photoID, photo1)
        try send(&w, text: "and this", photoID: photo1, messageID: message2)
    }

    func testMessageText1To1000CharactersUnderTheTextRules() throws {
        var w = try World.mated()
        assertRefused("validation_failed", field: "text") { try send(&w, text: "") }
        assertRefused("validation_failed", field: "text") { try send(&w, text: String(repeating: "a", count: 1001)) }
        assertRefused("validation_failed", field: "text") { try send(&w, text: "bad\u{0}") }
        assertRefused("validation_failed", field: "text") { try send(&w, text: "rtl\u{202E}") }
        try send(&w, text: String(repeating: "a", count: 1000))
        // Stored NFC: "e" + combining acute becomes "é".
        let decision = try send(&w, text: "cafe\u{301}", messageID: message2)
        guard case .messageSent(let sent) = decision.events.first?.event else { return XCTFail("no message") }
        XCTAssertEqual(sent.text, "caf\u{E9}")
    }

    func testSendMessageWithAnExistingIDAlreadyExists() throws {
        var w = try World.mated()
        try send(&w)
        assertRefused("already_exists") { try send(&w) }
    }

    func testEditOwnMessageWithin15Minutes() throws {
        var w = try World.mated()
        try send(&w)
        w.now = t0.addingTimeInterval(15 * 60)
        let decision = try w.run(.editMessage(messageID: message1, by: alice, mate: bob, text: "East gate instead"))
        XCTAssertEqual(decision.appends.map(\.stream), [.chat(alice, bob)])
        XCTAssertEqual(
            decision.events.map(\.event),
            [.messageEdited(MessageEdited(messageID: message1, from: alice, to: bob, text: "East gate instead", editedAt: w.now))]
        )
    }

    func testEditAfter15MinutesEditWindowPassed() throws {
        var w = try World.mated()
        try send(&w)
        w.now = t0.addingTimeInterval(15 * 60 + 0.001)
        assertRefused("edit_window_passed") { try w.run(.editMessage(messageID: message1, by: alice, mate: bob, text: "late")) }
    }

    func testEditSomeoneElsesMessageNotSender() throws {
        var w = try World.mated()
        try send(&w)
        assertRefused("not_sender") { try w.run(.editMessage(messageID: message1, by: bob, mate: alice, text: "mine now")) }
    }

    func testEditUnsentMessageMessageUnsent() throws {
        var w = try World.mated()
        try send(&w)
        try w.run(.unsendMessage(messageID: message1, by: alice, mate: bob))
        assertRefused("message_unsent") { try w.run(.editMessage(messageID: message1, by: alice, mate: bob, text: "again")) }
    }

    func testEditUnknownMessageNotFound() throws {
        var w = try World.mated()
        assertRefused("not_found") { try w.run(.editMessage(messageID: message1, by: alice, mate: bob, text: "x")) }
    }

    func testEditTextFollowsTheTextRules() throws {
        var w = try World.mated()
        try send(&w)
        assertRefused("validation_failed", field: "text") { try w.run(.editMessage(messageID: message1, by: alice, mate: bob, text: "")) }
    }

    func testEditAfterUnpairingNotMatesHistoryIsReadOnly() throws {
        var w = try World.mated()
        try send(&w)
        try w.run(.unpair(by: bob, mate: alice))
        assertRefused("not_mates") { try w.run(.editMessage(messageID: message1, by: alice, mate: bob, text: "x")) }
    }

    func testUnsendOwnMessageRecordsMessageUnsent() throws {
        var w = try World.mated()
        try send(&w)
        w.now = t0.addingTimeInterval(3600)
        let command = Command.unsendMessage(messageID: message1, by: alice, mate: bob)
        // Unsending reads nothing but the conversation.
        XCTAssertEqual(SniffMeet.streams(for: command, loaded: [:]), [.chat(alice, bob)])
        let decision = try w.run(command)
        XCTAssertEqual(decision.events.map(\.event), [.messageUnsent(MessageUnsent(messageID: message1, from: alice, to: bob, at: w.now))])
        XCTAssertEqual(chat(w).messages[message1]?.unsent, true)
    }

    func testUnsendAgainChangesNothing() throws {
        var w = try World.mated()
        try send(&w)
        try w.run(.unsendMessage(messageID: message1, by: alice, mate: bob))
        XCTAssertTrue(try w.run(.unsendMessage(messageID: message1, by: alice, mate: bob)).isEmpty)
    }

    func testUnsendSomeoneElsesMessageNotSender() throws {
        var w = try World.mated()
        try send(&w)
        assertRefused("not_sender") { try w.run(.unsendMessage(messageID: message1, by: bob, mate: alice)) }
    }

    func testUnsendUnknownMessageNotFound() throws {
        var w = try World.mated()
        assertRefused("not_found") { try w.run(.unsendMessage(messageID: message1, by: alice, mate: bob)) }
        // A message of another conversation is not in this one.
        try send(&w)
        assertRefused("not_found") { try w.run(.unsendMessage(messageID: message1, by: alice, mate: carol)) }
    }

    func testUnsendWorksAfterABlock() throws {
        var w = try World.mated()
        try send(&w)
        try w.run(.block(by: bob, user: alice, walks: []))
        try w.run(.unsendMessage(messageID: message1, by: alice, mate: bob))
        XCTAssertEqual(chat(w).messages[message1]?.unsent, true)
    }

    func testMessageTextAndPhotoArePersonalUnderTheMessagesKey() {
        let sent = Event.messageSent(MessageSent(messageID: message1, from: alice, to: bob, seq: 1, text: "x", photoID: nil, sentAt: t0))
        XCTAssertEqual(sent.personalDataOwner, alice)
        XCTAssertEqual(sent.messageKeyID, message1)
        XCTAssertEqual(sent.namedUsers, [alice, bob])
        let edited = Event.messageEdited(MessageEdited(messageID: message1, from: alice, to: bob, text: "y", editedAt: t0))
        XCTAssertEqual(edited.messageKeyID, message1)
        let unsent = Event.messageUnsent(MessageUnsent(messageID: message1, from: alice, to: bob, at: t0))
        XCTAssertNil(unsent.personalDataOwner)
        XCTAssertNil(unsent.messageKeyID)
        XCTAssertEqual(unsent.chatMessageID, message1)
    }

    // MARK: Reports naming a message

    let chatReport = id("F2000000-0000-4000-8000-000000000001")

    func reportMessage(
        _ w: inout World,
        by reporter: UUID = alice,
        about reported: UUID = bob,
        _ messageID: UUID
    ) throws(DomainError)
        -> Decision
    {
        try w.run(
            .report(
                reportID: chatReport,
                reporter: reporter,
                reported: reported,
                reason: .harassment,
                walkID: nil,
                messageID: messageID,
                note: nil
            )
        )
    }

    func testReportNamingTheirMessageRecordsItReadingTheChatStream() throws {
        var w = try World.mated()
        try send(&w, from: bob, to: alice, text: "rude words", messageID: message1)
        let decision = try reportMessage(&w, message1)
        // The conversation is read, not written.
        XCTAssertEqual(decision.appends.map(\.stream), [.user(bob)])
        guard case .userReported(let e) = decision.events.first?.event else { return XCTFail("no report") }
        XCTAssertEqual(e.messageID, message1)
        XCTAssertEqual(e.walkID, nil)
    }

    func testReportedMessageMustBeTheirsInOurConversationNotFound() throws {
        var w = try World.mated()
        try send(&w, from: alice, to: bob, text: "mine", messageID: message1)
        // My own message, and a message that does not exist: the same answer.
        assertRefused("not_found") { try reportMessage(&w, message1) }
        assertRefused("not_found") { try reportMessage(&w, message2) }
        // Bob's message to Carol is not in Alice's conversation with Bob.
        try w.run(.registerUser(userID: carol, profile: profile(nickname: "Carol")))
        try w.run(.requestMate(requestID: request2, from: carol, to: bob, dropToken: token(by: bob)))
        try w.run(.acceptMate(requestID: request2, pair: MatePair(bob, carol), by: bob))
        try send(&w, from: bob, to: carol, text: "to carol", messageID: message2)
        assertRefused("not_found") { try reportMessage(&w, by: carol, about: bob, message1) }
        try reportMessage(&w, by: carol, about: bob, message2)
        XCTAssertTrue(w.state(.user(bob)).user?.reports[chatReport] != nil)
    }

    func testAnUnsentMessageCanStillBeReported() throws {
        var w = try World.mated()
        try send(&w, from: bob, to: alice, text: "rude words", messageID: message1)
        try w.run(.unsendMessage(messageID: message1, by: bob, mate: alice))
        // Its place and sender stay; only its text is gone.
        let decision = try reportMessage(&w, message1)
        guard case .userReported(let e) = decision.events.first?.event else { return XCTFail("no report") }
        XCTAssertEqual(e.messageID, message1)
    }

    func testCommandNames() {
        XCTAssertEqual(Command.sendMessage(messageID: message1, from: alice, to: bob, text: "x", photoID: nil).name, "SendMessage")
        XCTAssertEqual(Command.editMessage(messageID: message1, by: alice, mate: bob, text: "x").name, "EditMessage")
        XCTAssertEqual(Command.unsendMessage(messageID: message1, by: alice, mate: bob).name, "UnsendMessage")
        XCTAssertEqual(DomainError.messageUnsent.code, "message_unsent")
        XCTAssertEqual(DomainError.editWindowPassed.code, "edit_window_passed")
    }
}
