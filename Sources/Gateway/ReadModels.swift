import Domain
import EventLog
import Foundation
import Postgres

/// The queries of the API. They read only read-model tables (schema/0003_read_models.sql).
///
/// Lists are newest first, keyed by (time in microseconds, id) or, for notifications, by the
/// event's feed position, with one extra row fetched to know whether a next page exists.
/// Each query's statement is a static constant beside it: built once, not interpolated per call.
public struct ReadModels: Sendable {
    let pool: ConnectionPool
    let gate: DatabaseGate

    public init(pool: ConnectionPool, gate: DatabaseGate) {
        self.pool = pool
        self.gate = gate
    }

    /// Columns of a card from `profiles` aliased `alias` (10 columns, see `card(row:at:)`).
    static func cardColumns(_ alias: String) -> String {
        "\(alias).user_id, \(alias).nickname, \(alias).dog_name, \(alias).age, \(alias).sex, \(alias).neutered, "
            + "\(alias).size, array_to_string(\(alias).keywords, ','), \(alias).profile_image, \(alias).created_at"
    }

    static func card(_ row: Row, at i: Int) throws -> (card: CardJSON, createdAt: Date) {
        // Keywords are enum words (no commas), so a joined string is cheaper than a JSON array per row.
        guard let keywords = row.withBytes(i + 7, { text in
            text.split(separator: UInt8(ascii: ",")).compactMap { Keyword(rawValue: String(decoding: $0, as: UTF8.self)) }
        }) else { throw PostgresError.decoding(column: "keywords", value: nil, as: "[Keyword]") }
        guard let sex = Sex(rawValue: try row.string(i + 4)), let size = Size(rawValue: try row.string(i + 6)) else {
            throw PostgresError.decoding(column: "sex/size", value: nil, as: "enum")
        }
        let profile = DogProfile(nickname: try row.string(i + 1), dogName: try row.string(i + 2), age: try row.int(i + 3),
                                 sex: sex, neutered: try row.bool(i + 5), size: size,
                                 keywords: keywords,
                                 profileImage: row.optionalString(i + 8))
        return (CardJSON(userID: try row.uuid(i), profile: profile), try row.date(i + 9))
    }

    // MARK: Profiles

    static let profileSQL = "SELECT \(cardColumns("p")) FROM profiles p WHERE p.user_id = $1"

    /// The caller's own profile.
    public func profile(of user: UUID) async throws -> ProfileJSON? {
        try await gate.withConnection(pool) { connection in
            guard let row = try connection.execute(Self.profileSQL, [user], prepared: true).first
            else { return nil }
            let (card, createdAt) = try Self.card(row, at: 0)
            return ProfileJSON(card: card, createdAt: createdAt)
        }
    }

    static let cardSQL = """
        SELECT \(cardColumns("p")) FROM profiles p
        WHERE p.user_id = $1 AND (
            $1 = $2
            OR EXISTS (SELECT 1 FROM mates m WHERE m.user_id = $2 AND m.mate_id = $1)
            OR EXISTS (SELECT 1 FROM mate_requests r WHERE (r.from_user = $1 AND r.to_user = $2) OR (r.from_user = $2 AND r.to_user = $1))
            OR EXISTS (SELECT 1 FROM walks w WHERE (w.from_user = $1 AND w.to_user = $2) OR (w.from_user = $2 AND w.to_user = $1)))
        """

    /// The card of `other` if `viewer` may see it: themselves, a mate, or someone with a mate
    /// request or a walk between the two. Anyone else is indistinguishable from nobody.
    public func card(of other: UUID, seenBy viewer: UUID) async throws -> CardJSON? {
        try await gate.withConnection(pool) { connection in
            try connection.execute(Self.cardSQL, [other, viewer], prepared: true).first.map { try Self.card($0, at: 0).card }
        }
    }

    // MARK: Mates

    static let matesSQL = """
        SELECT \(cardColumns("p")), m.mates_since, (extract(epoch FROM m.mates_since) * 1000000)::bigint
        FROM mates m JOIN profiles p ON p.user_id = m.mate_id
        WHERE m.user_id = $1
          AND ($2::bigint IS NULL OR (m.mates_since, m.mate_id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
        ORDER BY m.mates_since DESC, m.mate_id DESC
        LIMIT $4
        """

    /// The caller's mates, newest first.
    public func mates(of user: UUID, page: PageRequest) async throws -> PageJSON<MateJSON> {
        let after = try page.after.map { try Self.timeKey($0) }
        return try await gate.withConnection(pool) { connection in
            let rows = try connection.execute(Self.matesSQL, [user, after?.micros, after?.id, page.limit + 1], prepared: true).rows.map { row in
                (MateJSON(card: try Self.card(row, at: 0).card, matesSince: try row.date(10)), try row.int64(11))
            }
            return page.page(rows, item: { $0.0 }, key: { (String($0.1), $0.0.card.userID.uuidString.lowercased()) })
        }
    }

    static let requestColumns = "r.request_id, r.status, r.created_at, r.updated_at, (extract(epoch FROM r.created_at) * 1000000)::bigint, "
        + cardColumns("f") + ", " + cardColumns("t")

    static func mateRequest(_ row: Row) throws -> (MateRequestJSON, Int64) {
        (MateRequestJSON(requestID: try row.uuid(0), from: try card(row, at: 5).card, to: try card(row, at: 15).card,
                         status: try row.string(1), createdAt: try row.date(2), updatedAt: try row.date(3)), try row.int64(4))
    }

    static let mateRequestsSQL = """
        SELECT \(requestColumns)
        FROM mate_requests r JOIN profiles f ON f.user_id = r.from_user JOIN profiles t ON t.user_id = r.to_user
        WHERE (($2::text IS NULL AND (r.from_user = $1 OR r.to_user = $1))
               OR ($2 = 'incoming' AND r.to_user = $1) OR ($2 = 'outgoing' AND r.from_user = $1))
          AND ($3::text IS NULL OR r.status = $3)
          AND ($4::bigint IS NULL OR (r.created_at, r.request_id) < (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::uuid))
        ORDER BY r.created_at DESC, r.request_id DESC
        LIMIT $6
        """

    /// The caller's mate requests, newest first; `incoming`, `outgoing` or both, optionally by status.
    public func mateRequests(of user: UUID, direction: Direction?, status: String?, page: PageRequest) async throws -> PageJSON<MateRequestJSON> {
        let after = try page.after.map { try Self.timeKey($0) }
        return try await gate.withConnection(pool) { connection in
            let rows = try connection.execute(Self.mateRequestsSQL, [user, direction?.rawValue, status, after?.micros, after?.id, page.limit + 1], prepared: true).rows.map(Self.mateRequest)
            return page.page(rows, item: { $0.0 }, key: { (String($0.1), $0.0.requestID.uuidString.lowercased()) })
        }
    }

    // MARK: Walks

    static let walkColumns = "w.walk_id, w.message, w.latitude, w.longitude, w.place_name, w.status, w.created_at, w.expires_at, "
        + "w.answered_at, (extract(epoch FROM w.created_at) * 1000000)::bigint, " + cardColumns("f") + ", " + cardColumns("t")

    static func walk(_ row: Row, now: Date) throws -> (WalkJSON, Int64) {
        let expiresAt = try row.date(7)
        return (WalkJSON(walkID: try row.uuid(0), from: try card(row, at: 10).card, to: try card(row, at: 20).card,
                         message: try row.string(1), latitude: try row.double(2), longitude: try row.double(3),
                         placeName: row.optionalString(4), status: WalkJSON.shownStatus(try row.string(5), expiresAt: expiresAt, now: now),
                         createdAt: try row.date(6), expiresAt: expiresAt, answeredAt: try row.optionalDate(8)), try row.int64(9))
    }

    static let walkSQL = """
        SELECT \(walkColumns)
        FROM walks w JOIN profiles f ON f.user_id = w.from_user JOIN profiles t ON t.user_id = w.to_user
        WHERE w.walk_id = $1 AND (w.from_user = $2 OR w.to_user = $2)
        """

    /// One walk, if `viewer` sent or received it.
    public func walk(_ id: UUID, seenBy viewer: UUID) async throws -> WalkJSON? {
        try await gate.withConnection(pool) { connection in
            try connection.execute(Self.walkSQL, [id, viewer], prepared: true).first.map { try Self.walk($0, now: Date()).0 }
        }
    }

    static let walksSQL = """
        SELECT \(walkColumns)
        FROM walks w JOIN profiles f ON f.user_id = w.from_user JOIN profiles t ON t.user_id = w.to_user
        WHERE (($2::text IS NULL AND (w.from_user = $1 OR w.to_user = $1))
               OR ($2 = 'incoming' AND w.to_user = $1) OR ($2 = 'outgoing' AND w.from_user = $1))
          AND ($3::text IS NULL
               OR ($3 = 'pending' AND w.status = 'pending' AND w.expires_at > $7::timestamptz)
               OR ($3 = 'expired' AND (w.status = 'expired' OR (w.status = 'pending' AND w.expires_at <= $7::timestamptz)))
               OR ($3 NOT IN ('pending', 'expired') AND w.status = $3))
          AND ($4::bigint IS NULL OR (w.created_at, w.walk_id) < (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::uuid))
        ORDER BY w.created_at DESC, w.walk_id DESC
        LIMIT $6
        """

    /// The caller's walks, newest first; `incoming`, `outgoing` or both, optionally by status.
    /// `expired` also finds pending walks past their deadline (they are shown as expired).
    public func walks(of user: UUID, direction: Direction?, status: String?, page: PageRequest) async throws -> PageJSON<WalkJSON> {
        let after = try page.after.map { try Self.timeKey($0) }
        let now = Date()
        return try await gate.withConnection(pool) { connection in
            let rows = try connection.execute(Self.walksSQL, [user, direction?.rawValue, status, after?.micros, after?.id, page.limit + 1, now], prepared: true).rows.map { try Self.walk($0, now: now) }
            return page.page(rows, item: { $0.0 }, key: { (String($0.1), $0.0.walkID.uuidString.lowercased()) })
        }
    }

    // MARK: Notifications

    static let notificationColumns = """
        n.notification_id, n.category, n.from_user, n.from_dog_name, n.request_id, n.walk_id, n.message, n.latitude,
        n.longitude, n.place_name, n.created_at, n.log_transaction_id, n.log_position
        """

    /// An entry from `notificationColumns`, starting at column `offset`.
    static func notification(_ row: Row, offset o: Int = 0) throws -> NotificationJSON {
        NotificationJSON(notificationID: try row.uuid(o), category: try row.string(o + 1), fromUser: try row.uuid(o + 2),
                         fromDogName: try row.string(o + 3), requestID: try row.optionalUUID(o + 4), walkID: try row.optionalUUID(o + 5),
                         message: row.optionalString(o + 6), latitude: try row.optionalDouble(o + 7), longitude: try row.optionalDouble(o + 8),
                         placeName: row.optionalString(o + 9), createdAt: try row.date(o + 10),
                         position: LogPosition(transactionID: try row.uint64(o + 11), position: try row.int64(o + 12)))
    }

    static let notificationsSQL = """
        SELECT \(notificationColumns) FROM notifications n
        WHERE n.user_id = $1
          AND ($2::text IS NULL OR (n.log_transaction_id, n.log_position) < ($2::xid8, $3::bigint))
        ORDER BY n.log_transaction_id DESC, n.log_position DESC
        LIMIT $4
        """

    /// The caller's inbox, newest first (by the feed position of the event behind each entry).
    public func notifications(of user: UUID, page: PageRequest) async throws -> PageJSON<NotificationJSON> {
        let after = try page.after.map { parts -> LogPosition in
            // xid8 and log positions are never negative; bigint and xid8 hold the rest.
            guard let xid = UInt64(parts.0), let position = Int64(parts.1), position >= 0 else { throw APIError.validation("cursor", "cursor is not one we gave out") }
            return LogPosition(transactionID: xid, position: position)
        }
        return try await gate.withConnection(pool) { connection in
            let rows = try connection.execute(Self.notificationsSQL, [user, after.map { String($0.transactionID) }, after?.position, page.limit + 1], prepared: true).rows.map { try Self.notification($0) }
            return page.page(rows, item: { $0 }, key: { (String($0.position.transactionID), String($0.position.position)) })
        }
    }

    static let notificationsAfterSQL = """
        SELECT \(notificationColumns) FROM notifications n
        WHERE n.user_id = $1 AND (n.log_transaction_id, n.log_position) > ($2::xid8, $3::bigint)
        ORDER BY n.log_transaction_id, n.log_position
        LIMIT $4
        """

    /// The caller's entries after `position`, oldest first (the SSE stream).
    public func notifications(of user: UUID, after position: LogPosition, limit: Int) async throws -> [NotificationJSON] {
        try await gate.withConnection(pool) { connection in
            try connection.execute(Self.notificationsAfterSQL, [user, String(position.transactionID), position.position, limit], prepared: true).rows.map { try Self.notification($0) }
        }
    }

    /// The live feed's round: entries of any of `users` after `position`, oldest first, with the
    /// notifications projector's checkpoint read in the same snapshot. The projector commits its
    /// rows and its checkpoint together, so every entry up to that checkpoint is in this answer
    /// (or, when `limit` cut it short, up to the last entry returned).
    static let feedSQL = """
        WITH checkpoint AS (
            SELECT coalesce(max(transaction_id), '0'::xid8) AS transaction_id, coalesce(max(position), 0) AS position
            FROM projector_checkpoints WHERE projector = 'notifications'
        )
        SELECT c.transaction_id, c.position, n.*
        FROM checkpoint c
        LEFT JOIN LATERAL (
            SELECT \(notificationColumns), n.user_id FROM notifications n
            WHERE (n.log_transaction_id, n.log_position) > ($2::xid8, $3::bigint) AND n.user_id = ANY($1::uuid[])
            ORDER BY n.log_transaction_id, n.log_position
            LIMIT $4
        ) n ON true
        """

    /// One round of `NotificationFeed`: new entries of `users` after `position` and the
    /// position the feed has now read to.
    public func feed(users: [UUID], after position: LogPosition, limit: Int) async throws
        -> (entries: [(user: UUID, entry: NotificationJSON)], readTo: LogPosition) {
        try await gate.withConnection(pool) { connection in
            let rows = try connection.execute(Self.feedSQL, [users, String(position.transactionID), position.position, limit],
                                              prepared: true).rows
            guard let first = rows.first else { return ([], position) }
            let checkpoint = LogPosition(transactionID: try first.uint64(0), position: try first.int64(1))
            let entries = try rows.filter { !$0.isNull(2) }.map { row in
                (user: try row.uuid(15), entry: try Self.notification(row, offset: 2))
            }
            let readTo = entries.count == limit ? entries[entries.count - 1].entry.position : max(checkpoint, position)
            return (entries, readTo)
        }
    }

    /// Whether the caller has this inbox entry.
    public func hasNotification(_ id: UUID, of user: UUID) async throws -> Bool {
        try await gate.withConnection(pool) { connection in
            try connection.execute("SELECT 1 FROM notifications WHERE notification_id = $1 AND user_id = $2", [id, user], prepared: true).count > 0
        }
    }

    // MARK: Cursors

    /// Microseconds since 1970 of the years a row of ours can carry (1970 to 9999): a forged
    /// cursor outside them would overflow PostgreSQL's timestamp arithmetic.
    static let cursorMicros: ClosedRange<Int64> = 0...253_402_300_799_999_999

    /// A (microseconds, uuid) cursor, checked.
    static func timeKey(_ parts: (String, String)) throws -> (micros: Int64, id: UUID) {
        guard let micros = Int64(parts.0), Self.cursorMicros.contains(micros), let id = UUID(uuidString: parts.1) else {
            throw APIError.validation("cursor", "cursor is not one we gave out")
        }
        return (micros, id)
    }
}

/// `?direction=` of the list routes.
public enum Direction: String, Sendable {
    case incoming, outgoing
}
