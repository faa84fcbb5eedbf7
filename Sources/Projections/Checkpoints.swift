import EventLog
import Foundation
import Postgres

/// The `projector_checkpoints` table: where each projector (and each rebuild) stands.
public enum Checkpoints {
    /// The checkpoint stored under `name`.
    public static func read(_ name: String, on connection: Connection) throws -> LogPosition {
        guard let row = try connection.execute(
            "SELECT transaction_id, position FROM projector_checkpoints WHERE projector = $1", [name]).first
        else { throw ProjectionError.noCheckpoint(projector: name) }
        return LogPosition(transactionID: try row.uint64(0), position: try row.int64(1))
    }

    /// Moves the checkpoint `name` from `expected` to `new`, or throws `checkpointMoved` when
    /// it is no longer at `expected`. Call it first in the batch's transaction: the row lock it
    /// takes makes a competing writer (another owner, a rebuild's swap) wait, then fail.
    public static func advance(_ name: String, from expected: LogPosition, to new: LogPosition, on connection: Connection) throws {
        let result = try connection.execute("""
            UPDATE projector_checkpoints SET transaction_id = $2, position = $3, updated_at = now()
            WHERE projector = $1 AND transaction_id = $4 AND position = $5
            """, [name, new.transactionID, new.position, expected.transactionID, expected.position])
        guard result.affectedRows == 1 else { throw ProjectionError.checkpointMoved(projector: name) }
    }

    /// Applies one page of the feed to several projectors in one transaction, each from its
    /// own checkpoint: only the events after it, then its checkpoint moves to `last`.
    /// Returns the number of events applied (summed over projectors).
    @discardableResult
    public static func applyBatch(_ events: [ProjectedEvent], through last: LogPosition,
                                  projectors: [(projector: any Projector, checkpoint: LogPosition)],
                                  tables: TableSet, on connection: Connection) throws -> Int {
        try connection.transaction { connection in
            try applyBatchInTransaction(events, through: last, projectors: projectors, tables: tables, on: connection)
        }
    }

    /// `applyBatch` inside the caller's open transaction.
    @discardableResult
    public static func applyBatchInTransaction(_ events: [ProjectedEvent], through last: LogPosition,
                                               projectors: [(projector: any Projector, checkpoint: LogPosition)],
                                               tables: TableSet, on connection: Connection) throws -> Int {
        var applied = 0
        for (projector, checkpoint) in projectors where checkpoint < last {
            try advance(tables.checkpointName(projector.name), from: checkpoint, to: last, on: connection)
            let fresh = events.first.map { $0.position > checkpoint } == true ? events : events.filter { $0.position > checkpoint }
            try projector.apply(fresh, to: tables, on: connection)
            applied += fresh.count
        }
        return applied
    }
}
