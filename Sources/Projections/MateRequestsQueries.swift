import Foundation
import Postgres

/// A mate request with both users' cards.
public struct MateRequestRow: Sendable {
    public var requestID: UUID
    public var from: CardRow
    public var to: CardRow
    /// `pending`, `accepted`, `declined` or `cancelled`.
    public var status: String
    public var createdAt: Date
    public var updatedAt: Date
    /// Where the list continues below this row: (`created_at`, request id).
    public var key: TimeKey

    /// The SELECT list of `mate_requests r` joined with the profiles `f` (from) and `t` (to).
    static let columns =
        "r.request_id, r.status, r.created_at, r.updated_at, (extract(epoch FROM r.created_at) * 1000000)::bigint, "
        + CardRow.columns("f") + ", " + CardRow.columns("t")

    /// Reads the columns of `columns`.
    init(_ row: Row) throws {
        var reader = RowReader(row)
        requestID = try reader.uuid()
        status = try reader.string()
        createdAt = try reader.date()
        updatedAt = try reader.date()
        key = TimeKey(micros: try reader.int64(), id: requestID)
        from = try CardRow(&reader)
        to = try CardRow(&reader)
    }
}

/// The queries of the `mate_requests` read model.
public enum MateRequestsQueries {
    static let requestsSQL = """
        SELECT \(MateRequestRow.columns)
        FROM mate_requests r JOIN profiles f ON f.user_id = r.from_user JOIN profiles t ON t.user_id = r.to_user
        WHERE (($2::text IS NULL AND (r.from_user = $1 OR r.to_user = $1))
               OR ($2 = 'incoming' AND r.to_user = $1) OR ($2 = 'outgoing' AND r.from_user = $1))
          AND ($3::text IS NULL OR r.status = $3)
          AND ($4::bigint IS NULL OR (r.created_at, r.request_id) < (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::uuid))
        ORDER BY r.created_at DESC, r.request_id DESC
        LIMIT $6
        """

    /// Up to `limit` mate requests of `user`, newest first, below `after` when given.
    /// `direction` is `incoming`, `outgoing` or nil (both); `status` filters when given.
    public static func requests(
        of user: UUID,
        direction: String?,
        status: String?,
        after: TimeKey?,
        limit: Int
    ) -> Query<[MateRequestRow]> {
        Query(requestsSQL, [user, direction, status, after?.micros, after?.id, limit]) { try $0.rows.map(MateRequestRow.init) }
    }
}
