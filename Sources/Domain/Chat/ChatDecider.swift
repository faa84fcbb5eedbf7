import Foundation

/// The decider of a `chat-<lo>-<hi>` stream: sending, editing and unsending messages between
/// two mates. That the two are mates (and neither blocked the other) is checked by
/// `Command.steps(loaded:)` against the pair stream, read and made a condition of the append,
/// exactly as for SendWalk: a message and a concurrent unpairing or block cannot both win.
public enum ChatDecider: Decider {
    public enum Command: Sendable, Equatable {
        /// At least one of `text` and `photoID`.
        case send(messageID: UUID, from: UUID, to: UUID, text: String?, photoID: UUID?)
        case edit(messageID: UUID, by: UUID, text: String)
        case unsend(messageID: UUID, by: UUID)
    }

    /// Message text: 1–1000 characters under the "Text" rules.
    public static let textLength = 1...1000
    /// A message can be edited this long after it was sent.
    public static let editWindow: TimeInterval = 15 * 60

    public static let initial = ChatState.initial

    public static func evolve(_ state: ChatState, _ event: Event) -> ChatState {
        var s = state
        switch event {
        case .messageSent(let e):
            s.messages[e.messageID] = ChatState.Message(from: e.from, to: e.to, seq: e.seq, sentAt: e.sentAt)
            s.lastSeq = max(s.lastSeq, e.seq)
        case .messageUnsent(let e):
            s.messages[e.messageID]?.unsent = true
        default:
            break
        }
        return s
    }

    public static func decide(_ command: Command, _ state: ChatState, context: DecisionContext) throws(DomainError) -> [Event] {
        let now = context.now
        switch command {
        case .send(let messageID, let from, let to, let text, let photoID):
            guard from != to else { throw .notMates }
            let text = try text.map { text throws(DomainError) in try FreeText.clean(text, field: "text", length: textLength) }
            guard text != nil || photoID != nil else {
                throw .validationFailed(field: "text", reason: "a message needs a text or a photo")
            }
            // Message ids are made by the server: one that exists is a collision, never a resend.
            guard state.messages[messageID] == nil else { throw .alreadyExists }
            return [
                .messageSent(
                    MessageSent(messageID: messageID, from: from, to: to, seq: state.lastSeq + 1, text: text, photoID: photoID, sentAt: now)
                )
            ]

        case .edit(let messageID, let by, let text):
            let text = try FreeText.clean(text, field: "text", length: textLength)
            guard let message = state.messages[messageID] else { throw .notFound }
            guard message.from == by else { throw .notSender }
            guard !message.unsent else { throw .messageUnsent }
            guard now <= message.sentAt.addingTimeInterval(editWindow) else { throw .editWindowPassed }
            return [.messageEdited(MessageEdited(messageID: messageID, from: message.from, to: message.to, text: text, editedAt: now))]

        case .unsend(let messageID, let by):
            guard let message = state.messages[messageID] else { throw .notFound }
            guard message.from == by else { throw .notSender }
            // Unsending again changes nothing.
            guard !message.unsent else { return [] }
            return [.messageUnsent(MessageUnsent(messageID: messageID, from: message.from, to: message.to, at: now))]
        }
    }
}
