import EventLog
import Foundation
import Logging
import PersonalData
import Postgres
import Synchronization

/// Keeps the read models up to date: catch up from the checkpoints in large batches, then follow
/// the log live (woken by `EventLog.signal`, polling as the fallback).
///
/// All projectors owned here advance together on one dedicated connection: one feed read and
/// one transaction per batch (each projector's rows and checkpoint), rather than one reader and
/// one transaction per projector. Besides saving round trips, this keeps the projectors from
/// holding back each other's horizon: a running projector transaction has an xid, and the feed
/// stops below the oldest running xid.
///
/// One owner per projector per database: the connection holds `pg_try_advisory_lock` for each
/// projector it owns; runners in other processes stand by and retry, and take over what is free
/// when the owner's session ends. Ownership is for efficiency only; correctness comes from the
/// checkpoints' compare-and-set in each batch's transaction.
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
    public static let lockClass: Int32 = 73_362_244

    public let log: EventLog
    /// Opens sealed personal parts of the events it projects.
    public let sealer: EventSealer
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
        var task: Task<Void, Never>?
    }

    private let shared = Mutex(Shared())
    /// `waitUntil` callers, resumed when the batch they wait for commits.
    private let waiters = CheckpointWaiters()

    public init(
        log: EventLog,
        sealer: EventSealer,
        connectionString: String,
        projectors: [any Projector] = Projectors.all,
        options: Options = Options(),
        logger: Logger = Logger(label: "sniffmeet.projections")
    ) {
        self.log = log
        self.sealer = sealer
        self.connectionString = connectionString
        self.projectors = projectors
        self.options = options
        self.logger = logger
    }

    /// Starts projecting (no-op when already started).
    public func start() {
        shared.withLock { shared in
            guard shared.task == nil else { return }
            for projector in projectors { shared.local[projector.name] = Local() }
            shared.task = Task { [self] in await self.run() }
        }
    }

    /// Stops projecting and waits for it; the locks are released with the connection.
    public func stop() async {
        let task = shared.withLock { shared in
            defer { shared.task = nil }
            return shared.task
        }
        task?.cancel()
        await task?.value
    }

    // MARK: Status

    /// Each projector's checkpoint and lag as stored in the database, with this process's view
    /// of it (owner, standby, failed). Costs one query.
    public func status() async throws -> [ProjectorStatus] {
        let names = projectors.map(\.name)
        let stored = try await log.pool.withConnection { connection in
            try ProjectorStatus.read(names, on: connection)
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

    /// Read-your-writes: returns true once every named projector (default: all) has applied
    /// the log up to `position`, false when `timeout` passes first. Projectors owned by another
    /// process are watched through their stored checkpoints.
    /// `poll` is how often a checkpoint owned elsewhere is read again.
    public func waitUntil(
        position: LogPosition,
        projectors names: [String]? = nil,
        timeout: Duration,
        poll: Duration = .milliseconds(10)
    ) async throws -> Bool {
        let wanted = names ?? projectors.map(\.name)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let local = shared.withLock { $0.local }
            var missing = wanted.filter { local[$0]?.checkpoint.map { $0 < position } ?? true }
            // Owned here means the memory is the truth; anything else: ask the database.
            let elsewhere = missing.filter { local[$0]?.checkpoint == nil }
            if !elsewhere.isEmpty {
                let stored = try await log.pool.withConnection { connection in try Checkpoints.read(elsewhere, on: connection) }
                missing.removeAll { stored[$0].map { $0 >= position } ?? false }
            }
            if missing.isEmpty { return true }
            let now = clock.now
            if now >= deadline { return false }
            if missing.contains(where: { local[$0]?.checkpoint == nil }) {
                // Someone else's projector: poll its stored checkpoint.
                try await Task.sleep(for: min(deadline - now, poll))
                continue
            }
            let wake = await waiters.wait(until: position, names: missing, timeout: deadline - now) { names, position in
                self.ownedCheckpointsReach(names, position)
            }
            switch wake {
            case .reached: return true
            case .timedOut: return false
            case .lookAgain: try Task.checkCancellation()
            }
        }
    }

    /// True when every projector in `names` is owned here with its checkpoint at `position` or later.
    private func ownedCheckpointsReach(_ names: [String], _ position: LogPosition) -> Bool {
        shared.withLock { shared in
            names.allSatisfy { shared.local[$0]?.checkpoint.map { $0 >= position } ?? false }
        }
    }

    // MARK: Running

    /// Changes that can end ownership wake every waiter (they may need the database now).
    private func updateOwnership(_ names: [String], _ change: (inout Local) -> Void) {
        waiters.ownershipChanged {
            shared.withLock { shared in
                for name in names { change(&shared.local[name, default: Local()]) }
            }
        }
    }

    private func run() async {
        let names = projectors.map(\.name)
        while !Task.isCancelled {
            // A fresh single-connection pool: the dedicated connection that holds the locks.
            let pool = ConnectionPool(connectionString: connectionString, maxConnections: 1, logger: logger)
            do {
                try await project(on: pool)
            } catch is CancellationError {
            } catch {
                let message = PostgresError.logSummary(of: error)
                updateOwnership(names) { local in
                    if local.checkpoint != nil || local.state == .failed {
                        local.state = .failed
                        local.lastError = message
                    }
                    local.checkpoint = nil
                }
                logger.warning("projection failed; retrying", metadata: ["error": "\(message)"])
            }
            await pool.close()
            if Task.isCancelled { break }
            try? await Task.sleep(for: options.failureBackoff)
        }
        updateOwnership(names) {
            $0.state = .stopped
            $0.checkpoint = nil
        }
    }

    private struct Step: Sendable {
        var last: LogPosition?
        var full: Bool
        var pending: Bool
    }

    /// Claims what it can, then projects the owned projectors together until cancelled or an
    /// error; keeps trying to claim the rest every `standbyRetry`.
    private func project(on pool: ConnectionPool) async throws {
        let lockClass = Self.lockClass
        let clock = ContinuousClock()
        let backend = try await pool.withConnection { connection in
            // Read models are derived and a batch commits with its checkpoints, so a crash can
            // only lose whole recent batches, which are then projected again: no need to wait
            // for the WAL flush (the writers' commits stay durable).
            _ = try connection.execute("SELECT set_config('synchronous_commit', 'off', false)")
            // The same few dozen statements run for every batch: planned once each. Their plans
            // do not depend on the values (index probes per row of unnested arrays), and custom
            // planning cost as much as executing (pg_stat_statements under `bench-http`: 150 µs
            // to plan the feed read, 110 µs the checkpoints' update, each batch).
            _ = try connection.execute("SELECT set_config('plan_cache_mode', 'force_generic_plan', false)")
            connection.preparesEveryStatement = true
            return connection.backendPID
        }
        var owned: [any Projector] = []
        var checkpoints: [String: LogPosition] = [:]
        var lastClaim: ContinuousClock.Instant?
        let batchSize = options.batchSize

        while true {
            try Task.checkCancellation()
            if owned.count < projectors.count, lastClaim.map({ clock.now - $0 >= options.standbyRetry }) ?? true {
                lastClaim = clock.now
                let unowned = projectors.filter { p in !owned.contains { $0.name == p.name } }
                let claimed = try await pool.withConnection { connection in
                    guard connection.backendPID == backend else { throw ProjectionError.lostOwnership(projector: unowned[0].name) }
                    let locked = try connection.execute(
                        """
                        SELECT name FROM unnest($2::text[]) AS name WHERE pg_try_advisory_lock($1::int, hashtext(name))
                        """,
                        [lockClass, unowned.map(\.name)]
                    ).rows.map { try $0.string(0) }
                    return try Checkpoints.read(locked, on: connection)
                }
                let gained = unowned.filter { claimed[$0.name] != nil }
                let waiting = unowned.filter { claimed[$0.name] == nil }.map(\.name)
                owned += gained
                checkpoints.merge(claimed) { $1 }
                for projector in gained {
                    logger.info("projector owned here", metadata: ["projector": "\(projector.name)"])
                }
                waiters.ownershipChanged {
                    shared.withLock { shared in
                        for name in waiting { shared.local[name] = Local(state: .standby) }
                        for (name, checkpoint) in claimed { shared.local[name] = Local(state: .catchingUp, checkpoint: checkpoint) }
                    }
                }
            }
            if owned.isEmpty {
                try await Task.sleep(for: options.standbyRetry)
                continue
            }

            let generation = log.signal.generation
            let batch = owned.map { (projector: $0, checkpoint: checkpoints[$0.name]!) }
            let from = batch.map(\.checkpoint).min()!
            let step: Step
            let sealer = self.sealer
            do {
                step = try await pool.withConnection { connection in
                    // A replaced connection no longer holds the locks.
                    guard connection.backendPID == backend else { throw ProjectionError.lostOwnership(projector: batch[0].projector.name) }
                    // Bodies only of the events this process did not append (`EventSealer.events`).
                    let page = try EventLog.readFeed(on: connection, after: from, limit: batchSize, bodies: false)
                    guard let last = page.events.last?.position else {
                        return Step(last: nil, full: false, pending: page.pendingBeyondHorizon)
                    }
                    let events = try ProjectedEvent.decode(page.events, sealer: sealer, on: connection)
                    try Checkpoints.applyBatch(events, through: last, projectors: batch, tables: .live, sealer: sealer, on: connection)
                    return Step(last: last, full: page.full, pending: page.pendingBeyondHorizon)
                }
            } catch ProjectionError.checkpointMoved {
                // A rebuild swapped in new tables (or another owner wrote): start from the stored values.
                let names = owned.map(\.name)
                let stored = try await pool.withConnection { connection in try Checkpoints.read(names, on: connection) }
                checkpoints = stored
                waiters.ownershipChanged {
                    shared.withLock { shared in
                        for (name, checkpoint) in stored { shared.local[name]?.checkpoint = checkpoint }
                    }
                }
                continue
            }
            if let last = step.last {
                for name in checkpoints.keys { checkpoints[name] = max(checkpoints[name]!, last) }
            }
            let state: ProjectorStatus.State = step.full ? .catchingUp : .live
            let current = checkpoints
            waiters.checkpointsMoved(
                {
                    shared.withLock { shared in
                        for (name, checkpoint) in current {
                            shared.local[name]?.checkpoint = checkpoint
                            shared.local[name]?.state = state
                        }
                    }
                },
                reached: ownedCheckpointsReach
            )
            if step.full { continue }
            if step.pending {
                try await Task.sleep(for: options.horizonRetry)
                continue
            }
            // Unowned projectors are claimed again after `standbyRetry`: do not sleep past it.
            let timeout = owned.count < projectors.count ? min(options.pollInterval, options.standbyRetry) : options.pollInterval
            await log.signal.wait(since: generation, timeout: timeout)
        }
    }
}
