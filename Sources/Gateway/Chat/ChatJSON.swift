import Domain
import Foundation
import JSONText
import Projections
import UUIDText

/// A chat message as API.md shows it; `conversation` (the other mate, `user_id`) only on the
/// live stream, where messages of every conversation travel together.
public struct ChatMessageJSON: JSONObjectWritable, Sendable, Equatable {
    public var messageID: UUID
    public var seq: Int
    public var from: UUID
    public var text: String?
    public var photoID: UUID?
    public var sentAt: Date
    public var editedAt: Date?
    public var unsent: Bool
    public var conversation: UUID?

    public init(
        messageID: UUID,
        seq: Int,
        from: UUID,
        text: String?,
        photoID: UUID?,
        sentAt: Date,
        editedAt: Date?,
        unsent: Bool,
        conversation: UUID? = nil
    ) {
        self.messageID = messageID
        self.seq = seq
        self.from = from
        self.text = text
        self.photoID = photoID
        self.sentAt = sentAt
        self.editedAt = editedAt
        self.unsent = unsent
        self.conversation = conversation
    }

    init(_ row: ChatMessageRow, conversation: UUID? = nil) {
        self.init(
            messageID: row.messageID,
            seq: row.seq,
            from: row.from,
            text: row.unsent ? nil : row.text,
            photoID: row.unsent ? nil : row.photoID,
            sentAt: row.sentAt,
            editedAt: row.editedAt,
            unsent: row.unsent,
            conversation: conversation
        )
    }

    init(_ sent: MessageSent) {
        self.init(
            messageID: sent.messageID,
            seq: sent.seq,
            from: sent.from,
            text: sent.text,
            photoID: sent.photoID,
            sentAt: sent.sentAt,
            editedAt: nil,
            unsent: false
        )
    }

    public func writeMembers(_ object: inout JSONObjectWriter) throws {
        if let conversation { object.id("user_id", conversation) }
        object.id("message_id", messageID)
        object.int("seq", seq)
        object.id("from", from)
        object.string("text", text)
        object.id("photo_id", photoID)
        object.timestamp("sent_at", sentAt)
        object.timestamp("edited_at", editedAt)
        object.bool("unsent", unsent)
    }
}

/// One of my conversations as API.md shows it.
public struct ConversationJSON: JSONObjectWritable, Sendable {
    public var userID: UUID
    public var card: CardJSON
    public var lastMessage: ChatMessageJSON
    public var unreadCount: Int
    public var readUpTo: Int
    public var theirReadUpTo: Int
    public var canWrite: Bool
    public var updatedAt: Date

    init(_ row: ChatConversationRow) {
        userID = row.mate.userID
        card = CardJSON(row.mate)
        lastMessage = ChatMessageJSON(row.lastMessage)
        unreadCount = row.unreadCount
        readUpTo = row.readUpTo
        theirReadUpTo = row.theirReadUpTo
        canWrite = row.canWrite
        updatedAt = row.updatedAt
    }

    public func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("user_id", userID)
        try object.object("card", card)
        try object.object("last_message", lastMessage)
        object.int("unread_count", unreadCount)
        object.int("read_up_to", readUpTo)
        object.int("their_read_up_to", theirReadUpTo)
        object.bool("can_write", canWrite)
        object.timestamp("updated_at", updatedAt)
    }
}

/// `POST /v1/chats/{user_id}/messages`: a text, a photo, or both.
struct ChatMessageBody: Decodable, Equatable {
    var text: String?
    var photoID: String?

    enum CodingKeys: String, CodingKey {
        case text
        case photoID = "photo_id"
    }

    func photo() throws -> UUID? {
        guard let photoID else { return nil }
        guard let id = UUID(text: photoID) else { throw APIError.validation("photo_id", "photo_id must be a chat photo's id") }
        return id
    }
}

extension ChatMessageBody: FlatDecodable {
    init?(flat: FlatJSONObject) {
        guard let text = flat.optionalString("text"), let photoID = flat.optionalString("photo_id") else { return nil }
        self.init(text: text, photoID: photoID)
    }
}

/// `PATCH /v1/chats/{user_id}/messages/{message_id}`.
struct ChatEditBody: Decodable {
    var text: String
}

/// `PUT /v1/chats/{user_id}/read`.
struct ReadMarkerBody: Decodable {
    var upTo: Int

    enum CodingKeys: String, CodingKey {
        case upTo = "up_to"
    }

    func checked() throws -> Int {
        guard (0...Int(Int32.max)).contains(upTo) else { throw APIError.validation("up_to", "up_to must be a seq, 0 or more") }
        return upTo
    }
}
