import Domain
import Foundation
import Postgres

/// A walk request with both users' cards, as stored.
public struct WalkRow: Sendable {
    public var walkID: UUID
    public var from: CardRow
    public var to: CardRow
    public var message: String
    public var latitude: Double
    public var longitude: Double
    public var placeName: String?
    /// As stored: a pending walk past `expiresAt` stays `pending` until the expiry job writes it.
    public var status: String
    public var createdAt: Date
    public var expiresAt: Date
    public var answeredAt: Date?
    /// Where the list continues below this row: (`created_at`, walk id).
    public var key: TimeKey

    /// The SELECT list of `walks w` joined with the profiles `f` (from) and `t` (to).
    static let columns =
        "w.walk_id, w.message, w.latitude, w.longitude, w.place_name, w.status, w.created_at, w.expires_at, "
        + "w.answered_at, (extract(epoch FROM w.created_at) * 1000000)::bigint, " + CardRow.columns("f") + ", " + CardRow.columns("t")

    /// Reads the columns of `columns`.
    init(_ row: Row) throws {
        var reader = RowReader(row)
        walkID = try reader.uuid()
        message = try reader.string()
        latitude = try reader.double()
        longitude = try reader.double()
        placeName = reader.optionalString()
        status = try reader.string()
        createdAt = try reader.date()
        expiresAt = try reader.date()
        answeredAt = try reader.optionalDate()
        key = TimeKey(micros: try reader.int64(), id: walkID)
        from = try CardRow(&reader)
        to = try CardRow(&reader)
    }
}

/// The queries of the `walks` read model.
public enum WalksQueries {
    static let walkSQL = """
        SELECT \(WalkRow.columns)
        FROM walks w JOIN profiles f ON f.user_id = w.from_user JOIN profiles t ON t.user_id = w.to_user
        WHERE w.walk_id = $1 AND (w.from_user = $2 OR w.to_user = $2)
        """

    /// One walk, if `viewer` sent or received it.
    public static func walk(_ id: UUID, seenBy viewer: UUID) -> Query<WalkRow?> {
        Query(walkSQL, [id, viewer]) { try $0.first.map(WalkRow.init) }
    }

    static let walksSQL = """
        SELECT \(WalkRow.columns)
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

    /// Up to `limit` walks of `user`, newest first, below `after` when given. `direction` is
    /// `incoming`, `outgoing` or nil (both). `status` filters as shown at `now`: `expired` also
    /// finds pending walks past their deadline, `pending` only those before it.
    public static func walks(
        of user: UUID,
        direction: String?,
        status: String?,
        after: TimeKey?,
        limit: Int,
        now: Date
    ) -> Query<[WalkRow]> {
        Query(walksSQL, [user, direction, status, after?.micros, after?.id, limit, now]) { try $0.rows.map(WalkRow.init) }
    }

    static let requestedSQL = """
        SELECT walk_id, from_user, to_user, message, latitude, longitude, place_name, created_at, expires_at
        FROM walks
        WHERE walk_id = ANY($1::uuid[]) AND from_user IS NOT NULL AND to_user IS NOT NULL AND message IS NOT NULL
          AND latitude IS NOT NULL AND longitude IS NOT NULL AND created_at IS NOT NULL AND expires_at IS NOT NULL
        """

    /// The requests of those of `walkIDs` this read model holds, as they were sent (a request's
    /// message and place never change; an erased sender's walks are gone from it), for another
    /// projector that needs them: a primary-key probe each, where the log holds them sealed.
    public static func requested(_ walkIDs: [UUID], on connection: Connection) throws -> [UUID: WalkRequested] {
        var walks: [UUID: WalkRequested] = [:]
        for row in try connection.execute(requestedSQL, [walkIDs], prepared: true).rows {
            var reader = RowReader(row)
            let walk = WalkRequested(
                walkID: try reader.uuid(),
                from: try reader.uuid(),
                to: try reader.uuid(),
                message: try reader.string(),
                latitude: try reader.double(),
                longitude: try reader.double(),
                placeName: reader.optionalString(),
                createdAt: try reader.date(),
                expiresAt: try reader.date()
            )
            walks[walk.walkID] = walk
        }
        return walks
    }
}
