import EventLog
import Foundation
import PersonalData
import Postgres

/// The `projector_checkpoints` table: where each projector (and each rebuild) stands.
public enum Checkpoints {
    /// The checkpoint stored under `name`.
    public static func read(_ name: String, on connection: Connection) throws -> LogPosition {
        guard
            let row = try connection.execute(
                "SELECT transaction_id, position FROM projector_checkpoints WHERE projector = $1",
                [name]
            ).first
        else { throw ProjectionError.noCheckpoint(projector: name) }
        return LogPosition(transactionID: try row.uint64(0), position: try row.int64(1))
    }

    /// The checkpoints stored under `names`; throws `noCheckpoint` when one has no row.
    public static func read(_ names: [String], on connection: Connection) throws -> [String: LogPosition] {
        if names.isEmpty { return [:] }
        var found: [String: LogPosition] = [:]
        for row in try connection.execute(
            "SELECT projector, transaction_id, position FROM projector_checkpoints WHERE projector = ANY($1::text[])",
            [names]
        ).rows {
            found[try row.string(0)] = LogPosition(transactionID: try row.uint64(1), position: try row.int64(2))
        }
        if let missing = names.first(where: { found[$0] == nil }) { throw ProjectionError.noCheckpoint(projector: missing) }
        return found
    }

    /// Moves every named checkpoint from its `expected` position to `new`, in one statement (one
    /// round trip for a batch of all read models), or throws `checkpointMoved` naming one that is
    /// no longer where expected. Call it first in the batch's transaction: the row locks it takes
    /// make a competing writer (another owner, a rebuild's swap) wait, then fail.
    public static func advance(_ moves: [(name: String, expected: LogPosition)], to new: LogPosition, on connection: Connection) throws {
        if moves.isEmpty { return }
        let moved = try connection.execute(
            """
            UPDATE projector_checkpoints c SET transaction_id = $2, position = $3, updated_at = now()
            FROM unnest($1::text[], $4::xid8[], $5::bigint[]) AS expected(projector, transaction_id, position)
            WHERE c.projector = expected.projector
              AND c.transaction_id = expected.transaction_id AND c.position = expected.position
            RETURNING c.projector
            """,
            [
                moves.map(\.name), new.transactionID, new.position,
                moves.map(\.expected.transactionID), moves.map(\.expected.position),
            ]
        )
        let names = Set(try moved.rows.map { try $0.string(0) })
        if let stale = moves.first(where: { !names.contains($0.name) }) {
            throw ProjectionError.checkpointMoved(projector: stale.name)
        }
    }

    /// Applies one page of the feed to several projectors in one transaction, each from its
    /// own checkpoint: only the events after it, then its checkpoint moves to `last`.
    /// Returns the number of events applied (summed over projectors).
    @discardableResult
    public static func applyBatch(
        _ events: [ProjectedEvent],
        through last: LogPosition,
        projectors: [(projector: any Projector, checkpoint: LogPosition)],
        tables: TableSet,
        sealer: EventSealer,
        on connection: Connection
    ) throws -> Int {
        try connection.transaction { connection in
            try applyBatchInTransaction(events, through: last, projectors: projectors, tables: tables, sealer: sealer, on: connection)
        }
    }

    /// `applyBatch` inside the caller's open transaction.
    @discardableResult
    public static func applyBatchInTransaction(
        _ events: [ProjectedEvent],
        through last: LogPosition,
        projectors: [(projector: any Projector, checkpoint: LogPosition)],
        tables: TableSet,
        sealer: EventSealer,
        on connection: Connection
    ) throws -> Int {
        let moving = projectors.filter { $0.checkpoint < last }
        try advance(moving.map { (tables.checkpointName($0.projector.name), $0.checkpoint) }, to: last, on: connection)
        var applied = 0
        for (projector, checkpoint) in moving {
            let fresh = events.first.map { $0.position > checkpoint } == true ? events : events.filter { $0.position > checkpoint }
            try projector.apply(fresh, to: tables, on: connection, sealer: sealer)
            applied += fresh.count
        }
        return applied
    }
}
