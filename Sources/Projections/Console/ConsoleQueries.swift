import Foundation
import Postgres

/// A user's card as the console shows it, from `profiles` (nil fields once the profile is gone
/// from the read model, e.g. after an erasure).
public struct ConsoleCard: Sendable {
    public var userID: UUID
    public var nickname: String?
    public var dogName: String?
    public var age: Int?
    public var size: String?
    /// The card's photo URL (`/v1/photos/…`), if any.
    public var profileImage: String?
    public var suspended: Bool

    static func columns(_ alias: String) -> String {
        "\(alias).nickname, \(alias).dog_name, \(alias).age, \(alias).size, \(alias).profile_image, \(alias).suspended"
    }

    init(_ reader: inout RowReader, id: UUID) throws {
        userID = id
        nickname = reader.optionalString()
        dogName = reader.optionalString()
        age = try reader.nextIsNull() ? reader.skipNull() : reader.int()
        size = reader.optionalString()
        profileImage = reader.optionalString()
        suspended = try reader.nextIsNull() ? reader.skipNull() ?? false : reader.bool()
    }
}

/// One report as the console lists it: both cards, the evidence, its age.
public struct ConsoleReportRow: Sendable {
    public var reportID: UUID
    public var reporter: ConsoleCard
    public var reported: ConsoleCard
    public var reason: String
    public var note: String?
    /// The reported walk's message, while the walk is in the read model.
    public var walkMessage: String?
    /// The reported chat message's text, while it is readable (not unsent, not erased).
    public var messageText: String?
    public var status: String
    public var createdAt: Date
    /// Where an oldest-first list continues after this row.
    public var key: TimeKey
}

/// One entry of the audit log.
public struct OperatorActionRow: Sendable {
    public var eventID: UUID
    public var operatorName: String
    /// `resolve`, `suspend` or `lift`.
    public var action: String
    public var userID: UUID
    public var reportID: UUID?
    public var at: Date
    /// Where a newest-first list continues below this row.
    public var key: TimeKey
}

/// A user as the console's user page shows them.
public struct ConsoleUser: Sendable {
    public var card: ConsoleCard
    /// How many users blocked them.
    public var blockedBy: Int
}

/// The console's reads: open reports oldest first, a user's reports and actions, the audit log.
/// Every list is keyset-paged on (time, id).
public enum ConsoleQueries {
    static let reportSelect = """
        SELECT r.report_id, r.reporter, r.reported, \(ConsoleCard.columns("a")), \(ConsoleCard.columns("b")), r.reason, r.note,
               w.message, r.status, (extract(epoch FROM r.created_at) * 1000000)::bigint, m.text
        FROM reports r LEFT JOIN profiles a ON a.user_id = r.reporter LEFT JOIN profiles b ON b.user_id = r.reported
        LEFT JOIN walks w ON w.walk_id = r.walk_id
        LEFT JOIN chat_messages m ON m.message_id = r.message_id AND NOT m.unsent
        """

    static let openReportsSQL = """
        \(reportSelect)
        WHERE r.status = 'open'
          AND ($1::bigint IS NULL OR (r.created_at, r.report_id) > (timestamptz 'epoch' + $1::bigint * interval '1 microsecond', $2::uuid))
        ORDER BY r.created_at, r.report_id
        LIMIT $3
        """

    /// Up to `limit` open reports, oldest first, after `after` when given.
    public static func openReports(after: TimeKey?, limit: Int) -> Query<[ConsoleReportRow]> {
        Query(openReportsSQL, [after?.micros, after?.id, limit]) { result in try result.rows.map(readReport) }
    }

    static let userReportsSQL = """
        \(reportSelect)
        WHERE (r.reported = $1::uuid AND $2::bool) OR (r.reporter = $1::uuid AND NOT $2::bool)
        ORDER BY r.created_at DESC, r.report_id DESC
        LIMIT $3
        """

    /// The newest `limit` reports about `user` (`about: true`) or filed by them.
    public static func reports(of user: UUID, about: Bool, limit: Int) -> Query<[ConsoleReportRow]> {
        Query(userReportsSQL, [user, about, limit]) { result in try result.rows.map(readReport) }
    }

    static let reportSQL = "\(reportSelect) WHERE r.report_id = $1"

    /// One report by id.
    public static func report(_ id: UUID) -> Query<ConsoleReportRow?> {
        Query(reportSQL, [id]) { result in try result.first.map(readReport) }
    }

    static func readReport(_ row: Row) throws -> ConsoleReportRow {
        var reader = RowReader(row)
        let id = try reader.uuid()
        let reporterID = try reader.uuid()
        let reportedID = try reader.uuid()
        let reporter = try ConsoleCard(&reader, id: reporterID)
        let reported = try ConsoleCard(&reader, id: reportedID)
        let reason = try reader.string()
        let note = reader.optionalString()
        let message = reader.optionalString()
        let status = try reader.string()
        let key = TimeKey(micros: try reader.int64(), id: id)
        let messageText = reader.optionalString()
        return ConsoleReportRow(
            reportID: id,
            reporter: reporter,
            reported: reported,
            reason: reason,
            note: note,
            walkMessage: message,
            messageText: messageText,
            status: status,
            createdAt: key.date,
            key: key
        )
    }

    static let userSQL = """
        SELECT \(ConsoleCard.columns("p")), (SELECT count(*) FROM blocks WHERE blocked = $1)
        FROM profiles p WHERE p.user_id = $1
        """

    /// The user's card and how many blocked them; nil when no profile has that id.
    public static func user(_ id: UUID) -> Query<ConsoleUser?> {
        Query(userSQL, [id]) { result in
            try result.first.map { row in
                var reader = RowReader(row)
                let card = try ConsoleCard(&reader, id: id)
                return ConsoleUser(card: card, blockedBy: try reader.int())
            }
        }
    }

    static let actionsSQL = """
        SELECT event_id, operator, action, user_id, report_id, (extract(epoch FROM at) * 1000000)::bigint
        FROM operator_actions
        WHERE ($1::uuid IS NULL OR user_id = $1)
          AND ($2::bigint IS NULL OR (at, event_id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
        ORDER BY at DESC, event_id DESC
        LIMIT $4
        """

    /// Up to `limit` operator actions (about `user` when given), newest first, below `after`.
    public static func actions(about user: UUID? = nil, after: TimeKey?, limit: Int) -> Query<[OperatorActionRow]> {
        Query(actionsSQL, [user, after?.micros, after?.id, limit]) { result in
            try result.rows.map { row in
                var reader = RowReader(row)
                let id = try reader.uuid()
                let name = try reader.string()
                let action = try reader.string()
                let user = try reader.uuid()
                let report = try reader.optionalUUID()
                let key = TimeKey(micros: try reader.int64(), id: id)
                return OperatorActionRow(
                    eventID: id,
                    operatorName: name,
                    action: action,
                    userID: user,
                    reportID: report,
                    at: key.date,
                    key: key
                )
            }
        }
    }
}

extension RowReader {
    /// Steps over a NULL column: nil.
    mutating func skipNull<T>() -> T? {
        skip()
        return nil
    }
}
