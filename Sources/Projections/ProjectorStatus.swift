import EventLog
import Foundation
import Postgres

/// Where one projector stands, for `/metrics`, `GET /v1/admin/projections` and the runner's
/// `status()`.
public struct ProjectorStatus: Sendable, Codable, Equatable {
    /// What this process is doing with the projector.
    public enum State: String, Sendable, Codable {
        /// Not started here (or the runner was stopped).
        case stopped
        /// Another process owns it; this one waits to take over.
        case standby
        /// Owned here; reading full batches towards the head.
        case catchingUp = "catching_up"
        /// Owned here and at the head, following new events.
        case live
        /// Owned here but the last attempt failed; it retries.
        case failed
    }

    /// How far the stored checkpoint is, whoever owns the projector.
    public enum Progress: String, Sendable, Codable {
        /// No readable event after the checkpoint.
        case caughtUp = "caught_up"
        /// Applied some of the log, not all of it yet.
        case catchingUp = "catching_up"
        /// Applied nothing yet, and events are waiting.
        case notStarted = "not_started"
    }

    /// The projector's name (its checkpoint row).
    public var name: String
    public var state: State
    /// The stored checkpoint (whoever owns the projector); `.start` when it has no row yet.
    public var checkpoint: LogPosition
    /// Readable events after the checkpoint (below the feed's horizon): counted exactly up to
    /// `ProjectorStatus.exactLagLimit`, estimated from log positions beyond it.
    public var lagEvents: Int64
    /// Age of the oldest readable event not yet applied; 0 when caught up.
    public var lagSeconds: Double
    /// When the checkpoint last moved.
    public var updatedAt: Date?
    /// The last error, while `state` is `failed`.
    public var lastError: String?

    public var progress: Progress {
        lagEvents == 0 ? .caughtUp : (checkpoint == .start ? .notStarted : .catchingUp)
    }

    /// Lags up to this many events are counted; larger ones are estimated. Counting is a walk of
    /// the feed index from the checkpoint: a projector millions of events behind (a rebuild, a
    /// stuck projector) cost a whole-log count per projector on every `/metrics` scrape and
    /// every lag sample (18 ms a call under `scripts/bench-http` with lags in the thousands).
    public static let exactLagLimit = 1_000

    /// `read`'s one query: per projector (`$1`), its checkpoint, the events after it counted up to `$2`,
    /// the age of the oldest, and the distance in positions to the log's last event.
    static let lagSQL = """
        SELECT p.name, c.transaction_id, c.position, c.updated_at,
               (SELECT count(*) FROM (SELECT FROM events e
                 WHERE (e.transaction_id, e.position) > (coalesce(c.transaction_id, '0'::xid8), coalesce(c.position, 0))
                   AND e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
                 ORDER BY e.transaction_id, e.position LIMIT $2) AS counted),
               (SELECT extract(epoch FROM now() - e.recorded_at)::float8 FROM events e
                 WHERE (e.transaction_id, e.position) > (coalesce(c.transaction_id, '0'::xid8), coalesce(c.position, 0))
                   AND e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
                 ORDER BY e.transaction_id, e.position LIMIT 1),
               (SELECT max(position) FROM events) - coalesce(c.position, 0)
        FROM unnest($1::text[]) WITH ORDINALITY AS p(name, n)
        LEFT JOIN projector_checkpoints c ON c.projector = p.name
        ORDER BY p.n
        """

    /// The checkpoints of `names` (in that order) and their lag, straight from the database;
    /// `state` is `stopped` (only a runner knows better). One query.
    ///
    /// Lag counts only events below the feed's horizon (the oldest running transaction): those
    /// are what a projector can apply now, so a caught-up projector shows 0 while a long
    /// append is still open. Up to `exactUpTo` events it is exact; past that, it is the distance
    /// from the checkpoint's position to the log's last one (identity values lost to rolled-back
    /// appends count too), and never less than `exactUpTo`. The count's `ORDER BY` keeps it on
    /// the feed index: without it the generic plan of the `LIMIT` scanned the whole table for a
    /// projector at the head (110 ms on 300,000 events; 0.08 ms with it).
    public static func read(
        _ names: [String] = Projectors.names,
        exactUpTo limit: Int = exactLagLimit,
        on connection: Connection
    ) throws -> [ProjectorStatus] {
        let result = try connection.execute(lagSQL, [names, limit])
        return try result.rows.map { row in
            let counted = try row.int64(4)
            return ProjectorStatus(
                name: try row.string(0),
                state: .stopped,
                checkpoint: row.isNull(1) ? .start : LogPosition(transactionID: try row.uint64(1), position: try row.int64(2)),
                lagEvents: counted < Int64(limit) ? counted : max(Int64(limit), try row.optionalInt64(6) ?? 0),
                lagSeconds: max(0, try row.optionalDouble(5) ?? 0),
                updatedAt: try row.optionalDate(3),
                lastError: nil
            )
        }
    }
}
