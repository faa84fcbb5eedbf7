import EventLog
import Foundation
import Postgres

/// One chat message as the `chats` read model stores it.
public struct ChatMessageRow: Sendable, Equatable {
    public var messageID: UUID
    public var seq: Int
    public var from: UUID
    public var to: UUID
    /// Nil once unsent (or for a photo alone).
    public var text: String?
    public var photoID: UUID?
    public var sentAt: Date
    public var editedAt: Date?
    public var unsent: Bool

    static func columns(_ a: String) -> String {
        "\(a).message_id, \(a).seq, \(a).from_user, \(a).to_user, \(a).text, \(a).photo_id, \(a).sent_at, \(a).edited_at, \(a).unsent"
    }

    init(_ reader: inout RowReader) throws {
        messageID = try reader.uuid()
        seq = try reader.int()
        from = try reader.uuid()
        to = try reader.uuid()
        text = reader.optionalString()
        photoID = try reader.optionalUUID()
        sentAt = try reader.date()
        editedAt = try reader.optionalDate()
        unsent = try reader.bool()
    }
}

/// One of a user's conversations: the mate's card, the newest message, both read markers.
public struct ChatConversationRow: Sendable {
    public var mate: CardRow
    public var lastMessage: ChatMessageRow
    public var unreadCount: Int
    /// My read marker.
    public var readUpTo: Int
    /// The mate's read marker.
    public var theirReadUpTo: Int
    /// We are mates now and neither blocked the other.
    public var canWrite: Bool
    public var updatedAt: Date
    /// Where the list continues below this row: (`updated_at`, mate's id).
    public var key: TimeKey
}

/// The queries of the `chats` read model (and of the read markers beside it).
public enum ChatsQueries {
    static let conversationsSQL = """
        SELECT \(CardRow.columns("p")), \(ChatMessageRow.columns("lm")),
               coalesce(mine.up_to, 0), coalesce(theirs.up_to, 0),
               EXISTS (SELECT 1 FROM mates m WHERE m.user_id = c.user_id AND m.mate_id = c.mate_id)
                 AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.blocker = c.user_id AND b.blocked = c.mate_id)
                                                       OR (b.blocker = c.mate_id AND b.blocked = c.user_id)),
               (SELECT count(*) FROM chat_messages x
                WHERE x.lo = lm.lo AND x.hi = lm.hi AND x.from_user = c.mate_id AND x.seq > coalesce(mine.up_to, 0)),
               (extract(epoch FROM c.updated_at) * 1000000)::bigint
        FROM chat_conversations c
        JOIN profiles p ON p.user_id = c.mate_id
        JOIN chat_messages lm ON lm.message_id = c.last_message_id
        LEFT JOIN chat_read_markers mine ON mine.user_id = c.user_id AND mine.mate_id = c.mate_id
        LEFT JOIN chat_read_markers theirs ON theirs.user_id = c.mate_id AND theirs.mate_id = c.user_id
        WHERE c.user_id = $1
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = $1 AND b.blocked = c.mate_id)
          AND ($2::bigint IS NULL OR (c.updated_at, c.mate_id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
        ORDER BY c.updated_at DESC, c.mate_id DESC
        LIMIT $4
        """

    /// Up to `limit` conversations of `user`, the one with the newest message first, below
    /// `after` when given. A conversation with someone `user` blocked is not listed.
    public static func conversations(of user: UUID, after: TimeKey?, limit: Int) -> Query<[ChatConversationRow]> {
        Query(conversationsSQL, [user, after?.micros, after?.id, limit]) { result in
            try result.rows.map { row in
                var reader = RowReader(row)
                let mate = try CardRow(&reader)
                let last = try ChatMessageRow(&reader)
                let readUpTo = try reader.int()
                let theirReadUpTo = try reader.int()
                let canWrite = try reader.bool()
                let unread = Int(try reader.int64())
                let key = TimeKey(micros: try reader.int64(), id: mate.userID)
                return ChatConversationRow(
                    mate: mate,
                    lastMessage: last,
                    unreadCount: unread,
                    readUpTo: readUpTo,
                    theirReadUpTo: theirReadUpTo,
                    canWrite: canWrite,
                    updatedAt: key.date,
                    key: key
                )
            }
        }
    }

    static let beforeSQL = """
        SELECT \(ChatMessageRow.columns("m")) FROM chat_messages m
        WHERE m.lo = least($1::uuid, $2::uuid) AND m.hi = greatest($1::uuid, $2::uuid) AND ($3::int IS NULL OR m.seq < $3)
        ORDER BY m.seq DESC LIMIT $4
        """

    /// Up to `limit` messages between `user` and `mate`, newest first, below `before` when given.
    public static func messages(between user: UUID, and mate: UUID, before: Int?, limit: Int) -> Query<[ChatMessageRow]> {
        Query(beforeSQL, [user, mate, before, limit]) { result in
            try result.rows.map { row in
                var reader = RowReader(row)
                return try ChatMessageRow(&reader)
            }
        }
    }

    static let afterSQL = """
        SELECT \(ChatMessageRow.columns("m")) FROM chat_messages m
        WHERE m.lo = least($1::uuid, $2::uuid) AND m.hi = greatest($1::uuid, $2::uuid) AND m.seq > $3
        ORDER BY m.seq ASC LIMIT $4
        """

    /// Up to `limit` messages between `user` and `mate` after `seq`, oldest first (catch-up).
    public static func messages(between user: UUID, and mate: UUID, after seq: Int, limit: Int) -> Query<[ChatMessageRow]> {
        Query(afterSQL, [user, mate, seq, limit]) { result in
            try result.rows.map { row in
                var reader = RowReader(row)
                return try ChatMessageRow(&reader)
            }
        }
    }

    static let messageSQL = """
        SELECT \(ChatMessageRow.columns("m")) FROM chat_messages m
        WHERE m.message_id = $1 AND m.lo = least($2::uuid, $3::uuid) AND m.hi = greatest($2::uuid, $3::uuid)
        """

    /// One message, if it is in the conversation of `user` and `mate`.
    public static func message(_ id: UUID, between user: UUID, and mate: UUID) -> Query<ChatMessageRow?> {
        Query(messageSQL, [id, user, mate]) { result in
            try result.first.map { row in
                var reader = RowReader(row)
                return try ChatMessageRow(&reader)
            }
        }
    }

    static let knowsSQL = """
        SELECT EXISTS (SELECT 1 FROM chat_conversations WHERE user_id = $1 AND mate_id = $2)
            OR EXISTS (SELECT 1 FROM mates WHERE user_id = $1 AND mate_id = $2)
        """

    /// Whether `user` has a conversation with `mate` (a message in it, or they are mates now).
    public static func hasConversation(_ user: UUID, with mate: UUID) -> Query<Bool> {
        Query(knowsSQL, [user, mate]) { try $0.first!.bool(0) }
    }

    static let lastSeqSQL = """
        SELECT coalesce((SELECT last_seq FROM chat_conversations WHERE user_id = $1 AND mate_id = $2), 0)
        """

    /// The `seq` of the newest message between `user` and `mate` as the read model holds it (0
    /// before the first).
    public static func lastSeq(_ user: UUID, _ mate: UUID) -> Query<Int> {
        Query(lastSeqSQL, [user, mate]) { try $0.first!.int(0) }
    }

    static let matesSQL = """
        SELECT EXISTS (SELECT 1 FROM mates WHERE user_id = $1 AND mate_id = $2)
            AND NOT EXISTS (SELECT 1 FROM blocks WHERE (blocker = $1 AND blocked = $2) OR (blocker = $2 AND blocked = $1))
        """

    /// Whether `user` and `mate` are mates now and neither blocked the other.
    public static func areMates(_ user: UUID, _ mate: UUID) -> Query<Bool> {
        Query(matesSQL, [user, mate]) { try $0.first!.bool(0) }
    }

    static let photoSQL = """
        SELECT EXISTS (SELECT 1 FROM chat_messages m
                       WHERE m.photo_id = $1 AND m.lo = least($2::uuid, $3::uuid) AND m.hi = greatest($2::uuid, $3::uuid))
        """

    /// Whether `photo` was sent (and not unsent) in the conversation of `user` and `mate`.
    public static func photoIsInConversation(_ photo: UUID, _ user: UUID, _ mate: UUID) -> Query<Bool> {
        Query(photoSQL, [photo, user, mate]) { try $0.first!.bool(0) }
    }

    static let markerSQL = """
        INSERT INTO chat_read_markers (user_id, mate_id, up_to, updated_at) VALUES ($1, $2, $3, now())
        ON CONFLICT (user_id, mate_id) DO UPDATE SET up_to = EXCLUDED.up_to, updated_at = now()
        WHERE chat_read_markers.up_to < EXCLUDED.up_to
        RETURNING up_to
        """

    /// Moves `user`'s read marker of the conversation with `mate` to `upTo`, never backwards
    /// (a write: not a `Query`, which the pool may pipeline with reads). True when it moved.
    public static func moveReadMarker(_ user: UUID, _ mate: UUID, upTo: Int, on connection: Connection) throws -> Bool {
        !(try connection.execute(markerSQL, [user, mate, upTo]).rows.isEmpty)
    }
}

/// One change of a message (sent, edited or unsent) for one of its two users, at the feed
/// position of that change: what the live stream carries.
public struct ChatChange: Sendable {
    /// Whose stream it goes to.
    public var user: UUID
    /// The other mate (names the conversation).
    public var mate: UUID
    public var message: ChatMessageRow
    public var position: LogPosition
}

extension ChatsQueries {
    /// One round of the live feed: changes for any of the users, and how far it has read.
    public struct FeedRound: Sendable {
        public var changes: [ChatChange]
        public var readTo: LogPosition
    }

    /// Changes of messages of any of `users` after `position`, oldest first, with the chats
    /// projector's checkpoint read in the same snapshot (the projector commits rows and
    /// checkpoint together). A message to someone who has blocked its sender does not reach them.
    static let feedSQL = """
        WITH checkpoint AS (
            SELECT coalesce(max(transaction_id), '0'::xid8) AS transaction_id, coalesce(max(position), 0) AS position
            FROM projector_checkpoints WHERE projector = 'chats'
        )
        SELECT c.transaction_id, c.position, x.*
        FROM checkpoint c
        LEFT JOIN LATERAL (
            SELECT u.user_id, u.mate, \(ChatMessageRow.columns("m")), m.log_transaction_id, m.log_position
            FROM chat_messages m
            CROSS JOIN LATERAL (VALUES (m.from_user, m.to_user), (m.to_user, m.from_user)) AS u(user_id, mate)
            WHERE (m.log_transaction_id, m.log_position) > ($2::xid8, $3::bigint) AND u.user_id = ANY($1::uuid[])
              AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = u.user_id AND b.blocked = u.mate)
            ORDER BY m.log_transaction_id, m.log_position
            LIMIT $4
        ) x ON true
        """

    /// Changes for `users` after `position` (at most `limit` rows), and how far the feed has
    /// read: the last change when `limit` cut the answer short, else the projector's checkpoint.
    public static func feed(users: [UUID], after position: LogPosition, limit: Int) -> Query<FeedRound> {
        Query(feedSQL, [users, String(position.transactionID), position.position, limit]) { result in
            guard let first = result.rows.first else { return FeedRound(changes: [], readTo: position) }
            var head = RowReader(first)
            let checkpoint = LogPosition(transactionID: try head.uint64(), position: try head.int64())
            let changes = try result.rows.compactMap { row -> ChatChange? in
                var reader = RowReader(row)
                reader.skip(2)
                guard !reader.nextIsNull() else { return nil }
                let user = try reader.uuid()
                let mate = try reader.uuid()
                let message = try ChatMessageRow(&reader)
                let at = LogPosition(transactionID: try reader.uint64(), position: try reader.int64())
                return ChatChange(user: user, mate: mate, message: message, position: at)
            }
            let readTo = changes.count == limit ? changes[changes.count - 1].position : max(checkpoint, position)
            return FeedRound(changes: changes, readTo: readTo)
        }
    }

    static let latestSQL = """
        SELECT log_transaction_id, log_position FROM chat_messages WHERE lo = $1 OR hi = $1
        ORDER BY log_transaction_id DESC, log_position DESC LIMIT 1
        """

    /// The feed position of the newest change in `user`'s conversations (where a new stream starts).
    public static func latestChange(of user: UUID) -> Query<LogPosition> {
        Query(latestSQL, [user]) { result in
            guard let row = result.first else { return .start }
            return LogPosition(transactionID: try row.uint64(0), position: try row.int64(1))
        }
    }
}
