import Foundation
import Postgres

/// A walk log with its owner's card, as stored.
public struct WalkLogRow: Sendable {
    public var walkLogID: UUID
    public var owner: CardRow
    public var walkID: UUID?
    public var startedAt: Date
    public var endedAt: Date
    public var elapsedSeconds: Int
    public var movingSeconds: Int
    public var distanceM: Double
    public var visibility: String
    public var createdAt: Date
    /// Where the list continues below this row: (`created_at`, walk log id).
    public var key: TimeKey

    /// The SELECT list of `walk_logs l` joined with the owner's profile `p`.
    static let columns =
        "l.walk_log_id, l.walk_id, l.started_at, l.ended_at, l.elapsed_seconds, l.moving_seconds, l.distance_m, l.visibility, "
        + "l.created_at, (extract(epoch FROM l.created_at) * 1000000)::bigint, " + CardRow.columns("p")

    init(_ row: Row) throws {
        var reader = RowReader(row)
        walkLogID = try reader.uuid()
        walkID = try reader.optionalUUID()
        startedAt = try reader.date()
        endedAt = try reader.date()
        elapsedSeconds = Int(try reader.int64())
        movingSeconds = Int(try reader.int64())
        distanceM = try reader.double()
        visibility = try reader.string()
        createdAt = try reader.date()
        key = TimeKey(micros: try reader.int64(), id: walkLogID)
        owner = try CardRow(&reader)
    }
}

/// One user's walks, distance and moving time over a span of time.
public struct WalkTotals: Sendable, Equatable {
    public var walks: Int
    public var distanceM: Double
    public var movingSeconds: Int

    public init(walks: Int, distanceM: Double, movingSeconds: Int) {
        self.walks = walks
        self.distanceM = distanceM
        self.movingSeconds = movingSeconds
    }
}

/// The figures of `GET /v1/me/walk-stats`.
public struct WalkStats: Sendable, Equatable {
    /// The ISO week now, in the request's time zone.
    public var thisWeek: WalkTotals
    public var thisMonth: WalkTotals
    /// The last 12 ISO weeks, this one first: each week's Monday (a civil date, `YYYY-MM-DD`)
    /// and its totals.
    public var weeks: [(weekStart: String, totals: WalkTotals)]

    public static func == (a: WalkStats, b: WalkStats) -> Bool {
        a.thisWeek == b.thisWeek && a.thisMonth == b.thisMonth && a.weeks.map(\.weekStart) == b.weeks.map(\.weekStart)
            && a.weeks.map(\.totals) == b.weeks.map(\.totals)
    }
}

/// The queries of the `walk_logs` read model.
public enum WalkLogsQueries {
    /// Who may see a walk log `l` besides its owner: nobody when it is private; else the
    /// owner's mates and the other walker of the accepted walk it belongs to.
    static let seenBy = """
        (l.owner = $2 OR (l.visibility = 'mates' AND (
            EXISTS (SELECT 1 FROM mates m WHERE m.user_id = $2 AND m.mate_id = l.owner)
            OR EXISTS (SELECT 1 FROM walks w WHERE w.walk_id = l.walk_id AND w.status = 'accepted'
                       AND ((w.from_user = $2 AND w.to_user = l.owner) OR (w.to_user = $2 AND w.from_user = l.owner))))))
        """

    static let walkLogSQL = """
        SELECT \(WalkLogRow.columns)
        FROM walk_logs l JOIN profiles p ON p.user_id = l.owner
        WHERE l.walk_log_id = $1 AND \(seenBy)
        """

    /// One walk log, if `viewer` may see it.
    public static func walkLog(_ id: UUID, seenBy viewer: UUID) -> Query<WalkLogRow?> {
        Query(walkLogSQL, [id, viewer]) { try $0.first.map(WalkLogRow.init) }
    }

    static let walkLogsSQL = """
        SELECT \(WalkLogRow.columns)
        FROM walk_logs l JOIN profiles p ON p.user_id = l.owner
        WHERE l.owner = $1 AND \(seenBy.replacingOccurrences(of: "$2", with: "$4"))
          AND ($2::bigint IS NULL OR (l.created_at, l.walk_log_id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
        ORDER BY l.created_at DESC, l.walk_log_id DESC
        LIMIT $5
        """

    /// Up to `limit` walk logs of `owner` that `viewer` may see, newest first, below `after`.
    public static func walkLogs(of owner: UUID, seenBy viewer: UUID, after: TimeKey?, limit: Int) -> Query<[WalkLogRow]> {
        Query(walkLogsSQL, [owner, after?.micros, after?.id, viewer, limit]) { try $0.rows.map(WalkLogRow.init) }
    }

    static let areMatesSQL = "SELECT EXISTS (SELECT 1 FROM mates WHERE user_id = $1 AND mate_id = $2)"

    /// Whether `a` and `b` are mates now.
    public static func areMates(_ a: UUID, _ b: UUID) -> Query<Bool> {
        Query(areMatesSQL, [a, b]) { try $0.first?.bool(0) ?? false }
    }

    static let timeZoneSQL = "SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1)"

    /// Whether PostgreSQL knows the IANA time zone `name`.
    public static func knowsTimeZone(_ name: String) -> Query<Bool> {
        Query(timeZoneSQL, [name]) { try $0.first?.bool(0) ?? false }
    }

    /// Weeks are ISO weeks (Monday to Sunday: `date_trunc('week')`) of the civil time in the
    /// zone `$2`; a walk counts where it started. The 12 weeks are generated, so an empty week
    /// is a row of zeros.
    static let statsSQL = """
        WITH here AS (SELECT ($3::timestamptz AT TIME ZONE $2) AS now),
        spans AS (
            SELECT 'week' AS span, date_trunc('week', now) AS start, date_trunc('week', now) + interval '1 week' AS stop FROM here
            UNION ALL
            SELECT 'month', date_trunc('month', now), date_trunc('month', now) + interval '1 month' FROM here
            UNION ALL
            SELECT 'w' || k, date_trunc('week', now) - k * interval '1 week', date_trunc('week', now) - (k - 1) * interval '1 week'
            FROM here, generate_series(0, 11) AS k
        ),
        mine AS (SELECT started_at AT TIME ZONE $2 AS local, distance_m, moving_seconds FROM walk_logs
                 WHERE owner = $1 AND started_at >= ($3::timestamptz - interval '13 weeks' - interval '1 month'))
        SELECT s.span, to_char(s.start, 'YYYY-MM-DD'), count(m.local), coalesce(sum(m.distance_m), 0), coalesce(sum(m.moving_seconds), 0)
        FROM spans s LEFT JOIN mine m ON m.local >= s.start AND m.local < s.stop
        GROUP BY s.span, s.start
        ORDER BY s.start DESC, s.span
        """

    /// `owner`'s totals this week, this month and for each of the last 12 ISO weeks, in `timeZone`
    /// (an IANA name PostgreSQL knows; check with `knowsTimeZone` first), as of `now`.
    public static func stats(of owner: UUID, timeZone: String, now: Date) -> Query<WalkStats> {
        Query(statsSQL, [owner, timeZone, now]) { result in
            var week = WalkTotals(walks: 0, distanceM: 0, movingSeconds: 0)
            var month = week
            var weeks: [(String, WalkTotals)] = []
            for row in result.rows {
                var reader = RowReader(row)
                let span = try reader.string()
                let start = try reader.string()
                let totals = WalkTotals(
                    walks: Int(try reader.int64()),
                    distanceM: try reader.double(),
                    movingSeconds: Int(try reader.int64())
                )
                switch span {
                case "week": week = totals
                case "month": month = totals
                default: weeks.append((start, totals))
                }
            }
            return WalkStats(thisWeek: week, thisMonth: month, weeks: weeks)
        }
    }
}
