import Foundation
import Postgres

/// One user I blocked, as `GET /v1/me/blocks` shows them.
public struct BlockRow: Sendable {
    public var userID: UUID
    /// Nil once their profile is gone from the read model.
    public var dogName: String?
    public var nickname: String?
    public var blockedAt: Date
    /// Where the list continues below this row: (`blocked_at`, their id).
    public var key: TimeKey
}

/// One report for the operators: both cards, the reason, the note, the reported walk's message
/// and the reported chat message's text.
public struct ReportRow: Sendable {
    public var reportID: UUID
    public var reporter: CardRow
    public var reported: CardRow
    public var reason: String
    public var walkID: UUID?
    public var note: String?
    /// The reported walk's message, while the walk is in the read model.
    public var walkMessage: String?
    public var messageID: UUID?
    /// The reported chat message's text, while it is readable (not unsent, not erased).
    public var messageText: String?
    public var status: String
    public var createdAt: Date
    public var resolvedAt: Date?
    /// Where the list continues below this row: (`created_at`, report id).
    public var key: TimeKey
}

/// The queries of the `safety` read models (`blocks`, `reports`), and the walks a block cancels.
public enum SafetyQueries {
    static let blocksSQL = """
        SELECT b.blocked, p.dog_name, p.nickname, (extract(epoch FROM b.blocked_at) * 1000000)::bigint
        FROM blocks b LEFT JOIN profiles p ON p.user_id = b.blocked
        WHERE b.blocker = $1
          AND ($2::bigint IS NULL OR (b.blocked_at, b.blocked) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
        ORDER BY b.blocked_at DESC, b.blocked DESC
        LIMIT $4
        """

    /// Up to `limit` users `blocker` blocked, newest first, below `after` when given.
    public static func blocks(of blocker: UUID, after: TimeKey?, limit: Int) -> Query<[BlockRow]> {
        Query(blocksSQL, [blocker, after?.micros, after?.id, limit]) { result in
            try result.rows.map { row in
                var reader = RowReader(row)
                let user = try reader.uuid()
                let dogName = reader.optionalString()
                let nickname = reader.optionalString()
                let key = TimeKey(micros: try reader.int64(), id: user)
                return BlockRow(userID: user, dogName: dogName, nickname: nickname, blockedAt: key.date, key: key)
            }
        }
    }

    static let reportColumns = """
        r.report_id, \(CardRow.columns("a")), \(CardRow.columns("b")), r.reason, r.walk_id, r.note, w.message, r.status,
        r.resolved_at, (extract(epoch FROM r.created_at) * 1000000)::bigint, r.message_id, m.text
        """
    static let reportFrom = """
        FROM reports r JOIN profiles a ON a.user_id = r.reporter JOIN profiles b ON b.user_id = r.reported
        LEFT JOIN walks w ON w.walk_id = r.walk_id
        LEFT JOIN chat_messages m ON m.message_id = r.message_id AND NOT m.unsent
        """

    static let reportsSQL = """
        SELECT \(reportColumns) \(reportFrom)
        WHERE r.status = $1
          AND ($2::bigint IS NULL OR (r.created_at, r.report_id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
        ORDER BY r.created_at DESC, r.report_id DESC
        LIMIT $4
        """

    /// Up to `limit` reports in `status` (`open`, `resolved`), newest first, below `after` when given.
    public static func reports(status: String, after: TimeKey?, limit: Int) -> Query<[ReportRow]> {
        Query(reportsSQL, [status, after?.micros, after?.id, limit]) { result in try result.rows.map(readReport) }
    }

    static let reportSQL = "SELECT \(reportColumns) \(reportFrom) WHERE r.report_id = $1"

    /// One report by id.
    public static func report(_ id: UUID) -> Query<ReportRow?> {
        Query(reportSQL, [id]) { result in try result.first.map(readReport) }
    }

    static func readReport(_ row: Row) throws -> ReportRow {
        var reader = RowReader(row)
        let id = try reader.uuid()
        let reporter = try CardRow(&reader)
        let reported = try CardRow(&reader)
        let reason = try reader.string()
        let walkID = try reader.optionalUUID()
        let note = reader.optionalString()
        let message = reader.optionalString()
        let status = try reader.string()
        let resolvedAt = try reader.optionalDate()
        let key = TimeKey(micros: try reader.int64(), id: id)
        let messageID = try reader.optionalUUID()
        let messageText = reader.optionalString()
        return ReportRow(
            reportID: id,
            reporter: reporter,
            reported: reported,
            reason: reason,
            walkID: walkID,
            note: note,
            walkMessage: message,
            messageID: messageID,
            messageText: messageText,
            status: status,
            createdAt: key.date,
            resolvedAt: resolvedAt,
            key: key
        )
    }

    static let pendingWalksSQL = """
        SELECT walk_id FROM walks
        WHERE ((from_user = $1 AND to_user = $2) OR (from_user = $2 AND to_user = $1)) AND status = 'pending'
        """

    /// The pending walks between `a` and `b` (a block cancels them).
    public static func pendingWalks(between a: UUID, and b: UUID) -> Query<[UUID]> {
        Query(pendingWalksSQL, [a, b]) { result in try result.rows.map { try $0.uuid(0) } }
    }
}
