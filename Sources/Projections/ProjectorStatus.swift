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
    /// Readable events after the checkpoint (below the feed's horizon).
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

    /// The checkpoints of `names` (in that order) and their lag, straight from the database;
    /// `state` is `stopped` (only a runner knows better). One query.
    ///
    /// Lag counts only events below the feed's horizon (the oldest running transaction): those
    /// are what a projector can apply now, so a caught-up projector shows 0 while a long
    /// append is still open.
    public static func read(_ names: [String] = Projectors.names, on connection: Connection) throws -> [ProjectorStatus] {
        let result = try connection.execute(
            """
            SELECT p.name, c.transaction_id, c.position, c.updated_at,
                   (SELECT count(*) FROM events e
                     WHERE (e.transaction_id, e.position) > (coalesce(c.transaction_id, '0'::xid8), coalesce(c.position, 0))
                       AND e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())),
                   (SELECT extract(epoch FROM now() - e.recorded_at)::float8 FROM events e
                     WHERE (e.transaction_id, e.position) > (coalesce(c.transaction_id, '0'::xid8), coalesce(c.position, 0))
                       AND e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
                     ORDER BY e.transaction_id, e.position LIMIT 1)
            FROM unnest($1::text[]) WITH ORDINALITY AS p(name, n)
            LEFT JOIN projector_checkpoints c ON c.projector = p.name
            ORDER BY p.n
            """,
            [names]
        )
        return try result.rows.map { row in
            ProjectorStatus(
                name: try row.string(0),
                state: .stopped,
                checkpoint: row.isNull(1) ? .start : LogPosition(transactionID: try row.uint64(1), position: try row.int64(2)),
                lagEvents: try row.int64(4),
                lagSeconds: max(0, try row.optionalDouble(5) ?? 0),
                updatedAt: try row.optionalDate(3),
                lastError: nil
            )
        }
    }
}
