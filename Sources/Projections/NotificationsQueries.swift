import EventLog
import Foundation
import Postgres

/// An entry of a user's inbox.
public struct NotificationRow: Sendable {
    /// The id of the event behind the entry.
    public var notificationID: UUID
    public var category: String
    public var fromUser: UUID
    /// The sender's dog name when the event happened.
    public var fromDogName: String
    public var requestID: UUID?
    public var walkID: UUID?
    public var message: String?
    public var latitude: Double?
    public var longitude: Double?
    public var placeName: String?
    public var createdAt: Date
    /// The feed position of the event behind the entry: the inbox's order and keyset key.
    public var position: LogPosition

    public init(
        notificationID: UUID,
        category: String,
        fromUser: UUID,
        fromDogName: String,
        requestID: UUID?,
        walkID: UUID?,
        message: String?,
        latitude: Double?,
        longitude: Double?,
        placeName: String?,
        createdAt: Date,
        position: LogPosition
    ) {
        self.notificationID = notificationID
        self.category = category
        self.fromUser = fromUser
        self.fromDogName = fromDogName
        self.requestID = requestID
        self.walkID = walkID
        self.message = message
        self.latitude = latitude
        self.longitude = longitude
        self.placeName = placeName
        self.createdAt = createdAt
        self.position = position
    }

    /// The SELECT list of `notifications n`.
    public static let columns = """
        n.notification_id, n.category, n.from_user, n.from_dog_name, n.request_id, n.walk_id, n.message, n.latitude,
        n.longitude, n.place_name, n.created_at, n.log_transaction_id, n.log_position
        """

    /// Reads the columns of `columns` from where `reader` stands.
    init(_ reader: inout RowReader) throws {
        notificationID = try reader.uuid()
        category = try reader.string()
        fromUser = try reader.uuid()
        fromDogName = try reader.string()
        requestID = try reader.optionalUUID()
        walkID = try reader.optionalUUID()
        message = reader.optionalString()
        latitude = try reader.optionalDouble()
        longitude = try reader.optionalDouble()
        placeName = reader.optionalString()
        createdAt = try reader.date()
        position = LogPosition(transactionID: try reader.uint64(), position: try reader.int64())
    }

    init(_ row: Row) throws {
        var reader = RowReader(row)
        try self.init(&reader)
    }

    /// Reads the columns of `columns` from `row`, starting at `column`.
    public init(_ row: Row, from column: Int) throws {
        var reader = RowReader(row, from: column)
        try self.init(&reader)
    }
}

/// The queries of the `notifications` read model.
public enum NotificationsQueries {
    static let inboxSQL = """
        SELECT \(NotificationRow.columns) FROM notifications n
        WHERE n.user_id = $1
          AND ($2::text IS NULL OR (n.log_transaction_id, n.log_position) < ($2::xid8, $3::bigint))
        ORDER BY n.log_transaction_id DESC, n.log_position DESC
        LIMIT $4
        """

    /// Up to `limit` entries of `user`'s inbox, newest first (by feed position), below `before`
    /// when given. Ask one more than a page shows to learn whether another page follows.
    public static func inbox(of user: UUID, before: LogPosition?, limit: Int) -> Query<[NotificationRow]> {
        Query(inboxSQL, [user, before.map { String($0.transactionID) }, before?.position, limit]) { try $0.rows.map(NotificationRow.init) }
    }

    static let afterSQL = """
        SELECT \(NotificationRow.columns) FROM notifications n
        WHERE n.user_id = $1 AND (n.log_transaction_id, n.log_position) > ($2::xid8, $3::bigint)
        ORDER BY n.log_transaction_id, n.log_position
        LIMIT $4
        """

    /// Up to `limit` entries of `user` after `position`, oldest first (the SSE stream).
    public static func entries(
        of user: UUID,
        after position: LogPosition,
        limit: Int
    ) -> Query<[NotificationRow]> {
        Query(afterSQL, [user, String(position.transactionID), position.position, limit]) { try $0.rows.map(NotificationRow.init) }
    }

    /// One round of the live feed: new entries, with the user each belongs to, and the
    /// position the feed has read to.
    public struct FeedRound: Sendable {
        public var entries: [(user: UUID, entry: NotificationRow)]
        public var readTo: LogPosition
    }

    /// Entries of any of `users` after `position`, oldest first, with the notifications
    /// projector's checkpoint read in the same snapshot. The projector commits its rows and its
    /// checkpoint together, so every entry up to that checkpoint is in this answer (or, when
    /// `limit` cut it short, up to the last entry returned).
    static let feedSQL = """
        WITH checkpoint AS (
            SELECT coalesce(max(transaction_id), '0'::xid8) AS transaction_id, coalesce(max(position), 0) AS position
            FROM projector_checkpoints WHERE projector = 'notifications'
        )
        SELECT c.transaction_id, c.position, n.*
        FROM checkpoint c
        LEFT JOIN LATERAL (
            SELECT \(NotificationRow.columns), n.user_id FROM notifications n
            WHERE (n.log_transaction_id, n.log_position) > ($2::xid8, $3::bigint) AND n.user_id = ANY($1::uuid[])
            ORDER BY n.log_transaction_id, n.log_position
            LIMIT $4
        ) n ON true
        """

    /// New entries of `users` after `position` (at most `limit`), and how far the feed has now
    /// read: the last entry when `limit` cut the answer short, else the projector's checkpoint.
    public static func feed(users: [UUID], after position: LogPosition, limit: Int) -> Query<FeedRound> {
        Query(feedSQL, [users, String(position.transactionID), position.position, limit]) { result in
            try feedRound(result.rows, after: position, limit: limit)
        }
    }

    private static func feedRound(_ rows: [Row], after position: LogPosition, limit: Int) throws -> FeedRound {
        guard let first = rows.first else { return FeedRound(entries: [], readTo: position) }
        var head = RowReader(first)
        let checkpoint = LogPosition(transactionID: try head.uint64(), position: try head.int64())
        // No entry: the LEFT JOIN's one row, with the checkpoint and NULLs.
        let entries = try rows.compactMap { row -> (user: UUID, entry: NotificationRow)? in
            var reader = RowReader(row)
            reader.skip(2)  // the checkpoint, read once above
            guard !reader.nextIsNull() else { return nil }
            let entry = try NotificationRow(&reader)
            return (user: try reader.uuid(), entry: entry)
        }
        let readTo = entries.count == limit ? entries[entries.count - 1].entry.position : max(checkpoint, position)
        return FeedRound(entries: entries, readTo: readTo)
    }

    /// Whether `user` has the inbox entry `id`.
    public static func has(_ id: UUID, of user: UUID) -> Query<Bool> {
        Query("SELECT 1 FROM notifications WHERE notification_id = $1 AND user_id = $2", [id, user]) { $0.count > 0 }
    }
}
