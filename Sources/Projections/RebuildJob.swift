import EventLog
import Foundation
import Logging
import PersonalData
import Postgres

/// Rebuilds read models from the whole log without taking them offline.
///
/// The projectors write into fresh tables (`<table>__rebuild`, checkpoint rows
/// `<projector>__rebuild`) while the live tables keep serving. Once the fresh tables are at the
/// head, one transaction locks the live checkpoints and tables, applies the last few events,
/// drops the live tables, renames the fresh ones in and hands their checkpoint to the live
/// projector, which goes on from there (its compare-and-set notices the move).
///
/// Cancelling leaves the live tables untouched and the fresh ones with their checkpoint, so
/// running the job again resumes where it stopped.
///
/// Blocking: run it on a dedicated thread (`run(onThread:)`), never on Swift's cooperative pool.
public struct RebuildJob: Sendable {
    public var connectionString: String
    /// Opens sealed personal parts of the events it projects.
    public var sealer: EventSealer
    public var projectors: [any Projector]
    public var batchSize: Int
    /// Drop half-built fresh tables left by an earlier run and start from the beginning.
    public var restart: Bool
    public var logger: Logger

    /// What a run ended with.
    public enum Outcome: Sendable, Equatable {
        /// The fresh tables were swapped in, holding every event up to `at`.
        case swapped(at: LogPosition, events: Int)
        /// Stopped on request; the fresh tables keep their progress for the next run.
        case cancelled(at: LogPosition, events: Int)
    }

    /// The advisory lock class of rebuilds (the key is `hashtext(projector)`).
    static let lockClass: Int32 = 73_362_245

    public init(
        connectionString: String,
        sealer: EventSealer,
        projectors: [any Projector] = Projectors.all,
        batchSize: Int = 5000,
        restart: Bool = false,
        logger: Logger = Logger(label: "sniffmeet.rebuild")
    ) {
        self.connectionString = connectionString
        self.sealer = sealer
        self.projectors = projectors
        self.batchSize = batchSize
        self.restart = restart
        self.logger = logger
    }

    /// Runs the job on a thread of its own and waits for it without blocking the caller's thread.
    public func run(
        onThread isCancelled: @escaping @Sendable () -> Bool,
        progress: @escaping @Sendable (RebuildProgress) -> Void
    ) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try self.run(isCancelled: isCancelled, progress: progress) })
            }
            thread.name = "sniffmeet.rebuild"
            thread.start()
        }
    }

    /// Runs the job on the calling thread (blocking).
    public func run(isCancelled: () -> Bool, progress: (RebuildProgress) -> Void) throws -> Outcome {
        let connection = try Connection(connectionString: connectionString)
        // Fresh tables and their checkpoint commit together, so a crash loses at most recent
        // batches (redone by the rerun) or the swap (the old tables then still serve).
        try connection.execute("SELECT set_config('synchronous_commit', 'off', false)")
        let names = projectors.map(\.name)
        let fresh = TableSet.rebuild
        let started = Date()
        var report = RebuildProgress(phase: .preparing, projectors: names, events: 0, total: 0, elapsed: 0)
        func tell(_ phase: RebuildProgress.Phase) {
            report.phase = phase
            report.elapsed = Date().timeIntervalSince(started)
            progress(report)
        }
        tell(.preparing)

        // One rebuild per read model at a time; released when this connection closes.
        for name in names {
            let locked = try connection.execute("SELECT pg_try_advisory_lock($1::int, hashtext($2))", [Self.lockClass, name]).first!.bool(0)
            guard locked else { throw ProjectionError.rebuildRunning(projector: name) }
        }
        try connection.transaction { connection in
            for projector in projectors {
                if restart {
                    for table in projector.tables { try connection.execute("DROP TABLE IF EXISTS \(fresh(table))") }
                    try connection.execute("DELETE FROM projector_checkpoints WHERE projector = $1", [fresh.checkpointName(projector.name)])
                }
                for table in projector.tables { try ReadModelTables.createCopy(of: table, in: fresh, on: connection) }
                try connection.execute(
                    """
                    INSERT INTO projector_checkpoints (projector, transaction_id, position, updated_at) VALUES ($1, '0', 0, now())
                    ON CONFLICT (projector) DO NOTHING
                    """,
                    [fresh.checkpointName(projector.name)]
                )
            }
        }
        var checkpoints: [String: LogPosition] = [:]
        for name in names { checkpoints[name] = try Checkpoints.read(fresh.checkpointName(name), on: connection) }
        var cursor = checkpoints.values.min() ?? .start
        if cursor > .start { logger.info("resuming rebuild", metadata: ["projectors": "\(names)", "from": "\(cursor)"]) }
        report.total = try connection.execute(
            "SELECT count(*) FROM events WHERE (transaction_id, position) > ($1::xid8, $2::bigint)",
            [cursor.transactionID, cursor.position]
        ).first!.int(0)

        // Catch up outside any long transaction: the live tables keep serving meanwhile.
        while true {
            if isCancelled() {
                tell(.cancelled)
                return .cancelled(at: cursor, events: report.events)
            }
            let page = try EventLog.readFeed(on: connection, after: cursor, limit: batchSize)
            if let last = page.events.last?.position {
                let events = try ProjectedEvent.decode(page.events, sealer: sealer, on: connection)
                try Checkpoints.applyBatch(
                    events,
                    through: last,
                    projectors: projectors.map { ($0, checkpoints[$0.name]!) },
                    tables: fresh,
                    sealer: sealer,
                    on: connection
                )
                for name in names where checkpoints[name]! < last { checkpoints[name] = last }
                cursor = last
                report.events += page.events.count
                report.total = max(report.total, report.events)
                tell(.catchingUp)
            }
            if page.full { continue }
            if page.pendingBeyondHorizon {
                Thread.sleep(forTimeInterval: 0.002)
                continue
            }
            break
        }

        // The swap: short, and the only moment readers of these tables wait.
        tell(.swapping)
        let swappedAt = try connection.transaction { connection -> LogPosition in
            // Live checkpoints first, in the order live projectors lock them (one row each), then
            // the tables: a live batch in flight finishes first, the next one waits and then
            // finds its checkpoint moved.
            try connection.execute(
                """
                SELECT projector FROM projector_checkpoints WHERE projector = ANY($1::text[]) ORDER BY projector FOR UPDATE
                """,
                [names + names.map(fresh.checkpointName)]
            )
            let liveTables = projectors.flatMap(\.tables).map { TableSet.live($0) }.joined(separator: ", ")
            try connection.execute("LOCK TABLE \(liveTables) IN ACCESS EXCLUSIVE MODE")
            // The events committed since the catch-up ended.
            while true {
                let page = try EventLog.readFeed(on: connection, after: cursor, limit: batchSize)
                guard let last = page.events.last?.position else { break }
                let events = try ProjectedEvent.decode(page.events, sealer: sealer, on: connection)
                try Checkpoints.applyBatchInTransaction(
                    events,
                    through: last,
                    projectors: projectors.map { ($0, checkpoints[$0.name]!) },
                    tables: fresh,
                    sealer: sealer,
                    on: connection
                )
                for name in names where checkpoints[name]! < last { checkpoints[name] = last }
                cursor = last
                report.events += page.events.count
                if !page.full { break }
            }
            for projector in projectors {
                for table in projector.tables { try ReadModelTables.swapIn(table, from: fresh, on: connection) }
                let at = checkpoints[projector.name]!
                try connection.execute(
                    """
                    UPDATE projector_checkpoints SET transaction_id = $2, position = $3, updated_at = now() WHERE projector = $1
                    """,
                    [projector.name, at.transactionID, at.position]
                )
                try connection.execute("DELETE FROM projector_checkpoints WHERE projector = $1", [fresh.checkpointName(projector.name)])
            }
            return cursor
        }
        report.total = max(report.total, report.events)
        tell(.done)
        logger.info("rebuild swapped in", metadata: ["projectors": "\(names)", "at": "\(swappedAt)", "events": "\(report.events)"])
        return .swapped(at: swappedAt, events: report.events)
    }
}
