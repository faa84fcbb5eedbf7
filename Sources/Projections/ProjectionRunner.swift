import EventLog
import Foundation
import Logging
import Postgres
import Synchronization

/// Keeps the read models up to date: per projector, catch up from its checkpoint in large
/// batches, then follow the log live (woken by `EventLog.signal`, polling as the fallback).
///
/// One owner per projector per database: each projector runs on a dedicated connection that
/// holds `pg_try_advisory_lock` for it; runners in other processes stand by and retry, and take
/// over when the owner's session ends. Ownership is for efficiency only; correctness comes from
/// the checkpoint's compare-and-set in each batch's transaction.
///
/// Call `log.startListening(connectionString:)` once per process so appends of other processes
/// wake the runner at once rather than at the next poll.
public final class ProjectionRunner: Sendable {
    public struct Options: Sendable {
        /// Events per batch (one transaction each).
        public var batchSize: Int = 1000
        /// How often a standby tries to take over.
        public var standbyRetry: Duration = .seconds(1)
        /// Fallback poll when nothing signals.
        public var pollInterval: Duration = .milliseconds(500)
        /// How soon to look again when events wait behind an older running transaction.
        public var horizonRetry: Duration = .milliseconds(2)
        /// Pause after a failure before reconnecting.
        public var failureBackoff: Duration = .seconds(1)
        public init() {}
    }

    /// The advisory lock class of projector ownership (the key is `hashtext(name)`).
    static let lockClass: Int32 = 73_362_244

    public let log: EventLog
    public let connectionString: String
    public let projectors: [any Projector]
    public let options: Options
    private let logger: Logger

    private struct Local {
        var state: ProjectorStatus.State = .stopped
        /// Known only while owned here.
        var checkpoint: LogPosition?
        var lastError: String?
    }

    private struct Shared {
        var local: [String: Local] = [:]
        var tasks: [Task<Void, Never>] = []
    }

    private let shared = Mutex(Shared())
    /// Wakes `waitUntil` callers when a projector owned here commits a batch.
    private let progress = LogSignal()

    public init(log: EventLog, connectionString: String, projectors: [any Projector] = Projectors.all,
                options: Options = Options(), logger: Logger = Logger(label: "sniffmeet.projections")) {
        self.log = log
        self.connectionString = connectionString
        self.projectors = projectors
        self.options = options
        self.logger = logger
    }

    /// Starts one task per projector (no-op when already started).
    public func start() {
        shared.withLock { shared in
            guard shared.tasks.isEmpty else { return }
            for projector in projectors {
                shared.local[projector.name] = Local()
                shared.tasks.append(Task { [self] in await self.run(projector) })
            }
        }
    }

    /// Stops every projector and waits for them; their locks are released with their connections.
    public func stop() async {
        let tasks = shared.withLock { shared in
            defer { shared.tasks = [] }
            return shared.tasks
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    // MARK: Status

    /// Each projector's checkpoint and lag as stored in the database, with this process's view
    /// of it (owner, standby, failed). Costs one query.
    public func status() async throws -> [ProjectorStatus] {
        let names = projectors.map(\.name)
        let stored = try await log.pool.withConnection { connection in
            try Self.storedStatus(names, on: connection)
        }
        let local = shared.withLock { $0.local }
        return stored.map { status in
            var status = status
            if let mine = local[status.name] {
                status.state = mine.state
                status.lastError = mine.lastError
            }
            return status
        }
    }

    /// Checkpoints and lag straight from the database, for any set of checkpoint rows.
    public static func storedStatus(_ names: [String], on connection: Connection) throws -> [ProjectorStatus] {
        let result = try connection.execute("""
            SELECT c.projector, c.transaction_id, c.position, c.updated_at,
                   (SELECT count(*) FROM events e WHERE (e.transaction_id, e.position) > (c.transaction_id, c.position)),
                   (SELECT extract(epoch FROM clock_timestamp() - e.recorded_at)::float8 FROM events e
                     WHERE (e.transaction_id, e.position) > (c.transaction_id, c.position)
                     ORDER BY e.transaction_id, e.position LIMIT 1)
            FROM projector_checkpoints c WHERE c.projector = ANY($1::text[])
            """, [names])
        var byName: [String: ProjectorStatus] = [:]
        for row in result.rows {
            let name = try row.string(0)
            byName[name] = ProjectorStatus(
                name: name, state: .stopped,
                checkpoint: LogPosition(transactionID: try row.uint64(1), position: try row.int64(2)),
                lagEvents: try row.int64(4), lagSeconds: max(0, try row.optionalDouble(5) ?? 0),
                updatedAt: try row.optionalDate(3), lastError: nil)
        }
        return names.compactMap { byName[$0] }
    }

    /// Read-your-writes: returns true once every named projector (default: all) has applied
    /// the log up to `position`, false when `timeout` passes first. Projectors owned by another
    /// process are watched through their stored checkpoints.
    public func waitUntil(position: LogPosition, projectors names: [String]? = nil, timeout: Duration) async throws -> Bool {
        let wanted = names ?? projectors.map(\.name)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let generation = progress.generation
            let local = shared.withLock { $0.local }
            var missing = wanted.filter { local[$0]?.checkpoint.map { $0 < position } ?? true }
            // Owned here means the memory is the truth; anything else: ask the database.
            let elsewhere = missing.filter { local[$0]?.checkpoint == nil }
            if !elsewhere.isEmpty {
                let stored = try await log.pool.withConnection { connection in
                    try connection.execute(
                        "SELECT projector, transaction_id, position FROM projector_checkpoints WHERE projector = ANY($1::text[])",
                        [elsewhere]).rows.map { (try $0.string(0), LogPosition(transactionID: try $0.uint64(1), position: try $0.int64(2))) }
                }
                let reached = Set(stored.filter { $0.1 >= position }.map(\.0))
                missing.removeAll { reached.contains($0) }
            }
            if missing.isEmpty { return true }
            let now = clock.now
            if now >= deadline { return false }
            let allOwnedHere = missing.allSatisfy { local[$0]?.checkpoint != nil }
            await progress.wait(since: generation, timeout: allOwnedHere ? deadline - now : min(deadline - now, .milliseconds(10)))
        }
    }

    // MARK: Running one projector

    private func update(_ name: String, _ change: (inout Local) -> Void) {
        shared.withLock { change(&$0.local[name, default: Local()]) }
    }

    private func run(_ projector: any Projector) async {
        let name = projector.name
        while !Task.isCancelled {
            // A fresh single-connection pool: the dedicated connection that holds the lock.
            let pool = ConnectionPool(connectionString: connectionString, maxConnections: 1, logger: logger)
            do {
                try await own(projector, pool: pool)
            } catch is CancellationError {
            } catch {
                update(name) { $0.state = .failed; $0.lastError = "\(error)"; $0.checkpoint = nil }
                logger.warning("projector failed; retrying", metadata: ["projector": "\(name)", "error": "\(error)"])
            }
            await pool.close()
            if Task.isCancelled { break }
            try? await Task.sleep(for: options.failureBackoff)
        }
        update(name) { $0.state = .stopped; $0.checkpoint = nil }
    }

    private struct Step: Sendable {
        var checkpoint: LogPosition
        var applied: Int
        var full: Bool
        var pending: Bool
    }

    /// Waits for ownership, then projects until cancelled or an error.
    private func own(_ projector: any Projector, pool: ConnectionPool) async throws {
        let name = projector.name
        let lockClass = Self.lockClass
        var owner: Int32 = 0
        while true {
            try Task.checkCancellation()
            let (locked, backend) = try await pool.withConnection { connection in
                // Read models are derived and a batch commits with its checkpoint, so a crash can
                // only lose whole recent batches, which are then projected again: no need to wait
                // for the WAL flush (the writers' commits stay durable).
                _ = try connection.execute("SELECT set_config('synchronous_commit', 'off', false)")
                return (try connection.execute("SELECT pg_try_advisory_lock($1::int, hashtext($2))", [lockClass, name]).first!.bool(0),
                        connection.backendPID)
            }
            if locked { owner = backend; break }
            update(name) { $0.state = .standby; $0.checkpoint = nil; $0.lastError = nil }
            try await Task.sleep(for: options.standbyRetry)
        }
        let pid = owner
        logger.info("projector owned here", metadata: ["projector": "\(name)"])
        var checkpoint = try await pool.withConnection { connection in try Checkpoints.read(name, on: connection) }
        update(name) { $0.state = .catchingUp; $0.checkpoint = checkpoint; $0.lastError = nil }
        let batchSize = options.batchSize
        while true {
            try Task.checkCancellation()
            let generation = log.signal.generation
            let from = checkpoint
            let step: Step
            do {
                step = try await pool.withConnection { connection in
                    // A replaced connection no longer holds the lock.
                    guard connection.backendPID == pid else { throw ProjectionError.lostOwnership(projector: name) }
                    let page = try EventLog.readFeed(on: connection, after: from, limit: batchSize)
                    guard let last = page.events.last?.position else {
                        return Step(checkpoint: from, applied: 0, full: false, pending: page.pendingBeyondHorizon)
                    }
                    let events = try ProjectedEvent.decode(page.events)
                    try Checkpoints.applyBatch(events, through: last, projectors: [(projector, from)], tables: .live, on: connection)
                    return Step(checkpoint: last, applied: page.events.count, full: page.full, pending: page.pendingBeyondHorizon)
                }
            } catch ProjectionError.checkpointMoved {
                // A rebuild swapped in new tables (or another owner wrote): start from the stored value.
                checkpoint = try await pool.withConnection { connection in try Checkpoints.read(name, on: connection) }
                update(name) { $0.checkpoint = checkpoint }
                continue
            }
            checkpoint = step.checkpoint
            update(name) { $0.checkpoint = step.checkpoint; $0.state = step.full ? .catchingUp : .live }
            if step.applied > 0 { progress.notify() }
            if step.full { continue }
            if step.pending {
                try await Task.sleep(for: options.horizonRetry)
                continue
            }
            await log.signal.wait(since: generation, timeout: options.pollInterval)
        }
    }
}
