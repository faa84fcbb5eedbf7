import Foundation
import Postgres

/// One of a user's mates: their card and since when.
public struct MateRow: Sendable {
    public var mate: CardRow
    public var matesSince: Date
    /// Where the list continues below this row: (`mates_since`, mate's id).
    public var key: TimeKey
}

/// The queries of the `mates` read model.
public enum MatesQueries {
    static let matesSQL = """
        SELECT \(CardRow.columns("p")), (extract(epoch FROM m.mates_since) * 1000000)::bigint
        FROM mates m JOIN profiles p ON p.user_id = m.mate_id
        WHERE m.user_id = $1
          AND ($2::bigint IS NULL OR (m.mates_since, m.mate_id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
        ORDER BY m.mates_since DESC, m.mate_id DESC
        LIMIT $4
        """

    /// Up to `limit` mates of `user`, newest first, below `after` when given. Ask one more
    /// than a page shows to learn whether another page follows.
    public static func mates(of user: UUID, after: TimeKey?, limit: Int) -> Query<[MateRow]> {
        Query(matesSQL, [user, after?.micros, after?.id, limit]) { result in
            try result.rows.map { row in
                var reader = RowReader(row)
                let mate = try CardRow(&reader)
                let key = TimeKey(micros: try reader.int64(), id: mate.userID)
                return MateRow(mate: mate, matesSince: key.date, key: key)
            }
        }
    }
}
