import Foundation

/// What a `chat-<lo>-<hi>` stream knows: every message of the conversation by id, and the
/// last `seq` given out.
public struct ChatState: Sendable, Equatable {
    /// One message as the rules need it (its text is not needed to decide anything).
    public struct Message: Sendable, Equatable {
        public var from: UUID
        public var to: UUID
        public var seq: Int
        public var sentAt: Date
        public var unsent: Bool

        public init(from: UUID, to: UUID, seq: Int, sentAt: Date, unsent: Bool = false) {
            self.from = from
            self.to = to
            self.seq = seq
            self.sentAt = sentAt
            self.unsent = unsent
        }
    }

    public var messages: ChatMessages
    /// The `seq` of the newest message (0 before the first).
    public var lastSeq: Int

    public init(messages: [UUID: Message] = [:], lastSeq: Int = 0) {
        self.messages = ChatMessages(messages)
        self.lastSeq = lastSeq
    }

    /// A conversation with no messages.
    public static let initial = ChatState()
}

extension ChatState: StreamKindState {
    public static func extract(from state: StreamState) -> ChatState? { state.chat }
    public var embedded: StreamState { .chat(self) }
}
