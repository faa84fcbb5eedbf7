import Foundation
import UUIDText

// Payloads of the `chat-<lo>-<hi>` stream. `from` is always the message's sender and `to` the
// other mate, so projectors never need earlier events. Text and photo id are personal: the
// log's edge seals them under the key of that one message (`Event.messageKeyID`).

/// `message_sent`: one message, number `seq` of the conversation (1, 2, 3, … without gaps).
public struct MessageSent: Sendable, Equatable, Codable {
    public var messageID: UUID
    /// The sender.
    public var from: UUID
    /// The other mate.
    public var to: UUID
    /// The message's place in the conversation, the same for both sides.
    public var seq: Int
    public var text: String?
    public var photoID: UUID?
    public var sentAt: Date

    public init(messageID: UUID, from: UUID, to: UUID, seq: Int, text: String?, photoID: UUID?, sentAt: Date) {
        self.messageID = messageID
        self.from = from
        self.to = to
        self.seq = seq
        self.text = text
        self.photoID = photoID
        self.sentAt = sentAt
    }

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id"
        case from, to, seq, text
        case photoID = "photo_id"
        case sentAt = "sent_at"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesClear {
            try c.encode(messageID.lowercasedString, forKey: .messageID)
            try c.encode(from.lowercasedString, forKey: .from)
            try c.encode(to.lowercasedString, forKey: .to)
            try c.encode(seq, forKey: .seq)
            try c.encode(sentAt, forKey: .sentAt)
        }
        if part.writesPersonal {
            try c.encode(text, forKey: .text)  // explicit nulls keep the key set stable
            try c.encode(photoID?.lowercasedString, forKey: .photoID)
        }
    }
}

/// `message_edited`: the sender replaced the text of their message.
public struct MessageEdited: Sendable, Equatable, Codable {
    public var messageID: UUID
    /// The sender (only they may edit).
    public var from: UUID
    /// The other mate.
    public var to: UUID
    public var text: String
    public var editedAt: Date

    public init(messageID: UUID, from: UUID, to: UUID, text: String, editedAt: Date) {
        self.messageID = messageID
        self.from = from
        self.to = to
        self.text = text
        self.editedAt = editedAt
    }

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id"
        case from, to, text
        case editedAt = "edited_at"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesClear {
            try c.encode(messageID.lowercasedString, forKey: .messageID)
            try c.encode(from.lowercasedString, forKey: .from)
            try c.encode(to.lowercasedString, forKey: .to)
            try c.encode(editedAt, forKey: .editedAt)
        }
        if part.writesPersonal { try c.encode(text, forKey: .text) }
    }
}

/// `message_unsent`: the sender took their message back, for both sides. Carries nothing
/// personal; the message's key is destroyed in the same transaction.
public struct MessageUnsent: Sendable, Equatable, Codable {
    public var messageID: UUID
    /// The sender.
    public var from: UUID
    /// The other mate.
    public var to: UUID
    public var at: Date

    public init(messageID: UUID, from: UUID, to: UUID, at: Date) {
        self.messageID = messageID
        self.from = from
        self.to = to
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id"
        case from, to, at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(messageID.lowercasedString, forKey: .messageID)
        try c.encode(from.lowercasedString, forKey: .from)
        try c.encode(to.lowercasedString, forKey: .to)
        try c.encode(at, forKey: .at)
    }
}

extension Event {
    /// The type names whose personal part is sealed under a message's own key (`messageKeyID`);
    /// in the log, their sealed member's `owner` names the message, not a user.
    public static let messageKeyedTypeNames: Set<String> = ["message_sent", "message_edited"]

    /// The message whose own key seals this event's personal part (a chat message's text and
    /// photo id), or `nil` for events sealed under their owner's data key or not at all. The
    /// message key is itself sealed under the sender's (`personalDataOwner`) data key.
    public var messageKeyID: UUID? {
        switch self {
        case .messageSent(let e): e.messageID
        case .messageEdited(let e): e.messageID
        default: nil
        }
    }

    /// The message an event of a `chat-` stream is about.
    public var chatMessageID: UUID? {
        switch self {
        case .messageSent(let e): e.messageID
        case .messageEdited(let e): e.messageID
        case .messageUnsent(let e): e.messageID
        default: nil
        }
    }
}
