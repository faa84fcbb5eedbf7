import Foundation
import Postgres
import Synchronization

/// One command's append, as handed to the group commit.
public struct AppendRequest: Sendable {
    public var commandID: UUID?
    /// Every stream the command read or writes, with the version it saw.
    public var expectations: [String: ExpectedVersion]
    public var events: [NewEvent]
    /// Streams to read in the append's own transaction, each after the version the caller
    /// already holds (the users whose cards the command's answer shows): no second round trip.
    public var reads: [String: Int64]
    /// Rows of other tables that commit with the events, in the same transaction and round
    /// trip, each guarded by its event (written only where its append wrote); a batch's rows of
    /// one table are written by one statement.
    public var guardedRows: [GuardedRow]
    /// Called on the committing thread once the events are committed (not for a replay),
    /// before any append of the batch is answered and so before anyone announces them: the
    /// place to remember what this process's projectors will read back (`EventSealer.remember`).
    /// Remembering after the answer raced the projectors, which the first answer's announcement
    /// woke to read every event of the batch (under sign-ups a page in three missed some).
    public var committed: (@Sendable (AppendResult) -> Void)?

    public init(
        commandID: UUID?,
        expectations: [String: ExpectedVersion],
        events: [NewEvent],
        reads: [String: Int64] = [:],
        guardedRows: [GuardedRow] = [],
        committed: (@Sendable (AppendResult) -> Void)? = nil
    ) {
        self.commandID = commandID
        self.expectations = expectations
        self.events = events
        self.reads = reads
        self.guardedRows = guardedRows
        self.committed = committed
    }
}

/// What a group-committed append did, and the events of `AppendRequest.reads`.
public struct GroupAppendResult: Sendable {
    public var appended: AppendResult
    /// Per stream asked for, its events after the given version, in version order.
    public var reads: [String: [RecordedEvent]]
}

/// Group commit: the appends of concurrent commands share one transaction and one round trip.
///
/// While a batch is on its way to PostgreSQL, new appends queue; when it returns, the next
/// batch takes all of them. An idle server sends each append at once; a busy one sends tens
/// per round trip, with one lock statement and one commit (one WAL flush) for all of them.
/// When at least `secondBatchMinimum` wait (or, under a few writers, as many as the batch on
/// its way holds), a second batch goes beside the first (at most `maxInFlight`): `bench append`
/// at 16 writers went from about 0.6x to 0.9–1.0x of pgbench, at 4 writers from about 0.67x to
/// 0.71–0.79x, the CPUs no longer idle while a commit waits for its WAL flush. Batches in flight at once
/// are separate transactions; their lock statements take advisory locks in key order, so
/// they wait for each other on shared streams and never deadlock.
///
/// Each append keeps its own conditions: its insert writes all its events or none. One whose
/// condition fails in the batch (another command moved its stream first, possibly in the same
/// batch) wrote nothing and is run again alone, where it fails or succeeds exactly as it would
/// have without company. When the batch itself fails (a retried command id hits the unique
/// index, a deadlock with another process, a statement timeout) nothing of it committed and
/// every append is run alone.
final class GroupCommit: Sendable {
    /// A class: a batch's appends go through several maps and zips on their way, and each copy
    /// of it as a struct retained every one of its fields (3.6 % of a walk request's retains).
    private final class Waiting: Sendable {
        let plan: AppendPlan
        let reads: [String: Int64]
        let rows: [GuardedRow]
        let committed: (@Sendable (AppendResult) -> Void)?
        let continuation: CheckedContinuation<GroupAppendResult, any Error>

        init(
            plan: AppendPlan,
            reads: [String: Int64],
            rows: [GuardedRow],
            committed: (@Sendable (AppendResult) -> Void)?,
            continuation: CheckedContinuation<GroupAppendResult, any Error>
        ) {
            self.plan = plan
            self.reads = reads
            self.rows = rows
            self.committed = committed
            self.continuation = continuation
        }

        /// Runs the append on its own (`GroupCommit.alone`) and answers it.
        func answerAlone(on connection: Connection) {
            let guarded = GuardedTable.statements(for: rows)
            let result = Result { try GroupCommit.alone(plan, reads: reads, guarded: guarded, on: connection) }
            if case .success(let outcome) = result { tellCommitted(outcome) }
            continuation.resume(with: result)
        }

        /// `AppendRequest.committed`, unless the append was a replay.
        func tellCommitted(_ outcome: GroupAppendResult) {
            if !outcome.appended.replayed { committed?(outcome.appended) }
        }
    }

    private struct State {
        var queue: [Waiting] = []
        /// Batches on their way now, at most `maxInFlight`.
        var inFlight = 0
        /// Appends in the batch sent last.
        var lastBatch = 0

        /// Appends that must wait before another batch goes beside the one on its way: as many as
        /// that batch holds, up to `minimum`. A busy server's batches are large and a second one
        /// needs `minimum` (small batches would cost more CPU per append than the overlap
        /// saves); a few writers' batches are small, the CPUs partly idle, and a second batch
        /// of their size overlaps one commit's WAL flush with the next one's statements.
        func enoughForAnotherBatch(minimum: Int) -> Bool {
            queue.count >= min(minimum, max(1, lastBatch))
        }
    }

    let pool: ConnectionPool
    /// Appends per batch; the pipeline's statements must fit in one chunk (one transaction).
    let maxBatch: Int
    /// Batches sent at once. One more than one: while a batch waits for its commit's WAL
    /// flush, the next can already be locking and inserting (the CPUs sat partly idle with one).
    let maxInFlight: Int
    /// Appends that must be waiting before a batch goes beside one already on its way (fewer
    /// when that batch is smaller: `State.enoughForAnotherBatch`): smaller batches would cost
    /// more CPU per append than the overlap saves when the CPUs are busy.
    let secondBatchMinimum: Int
    private let state = Mutex(State())

    init(pool: ConnectionPool, maxBatch: Int = 64, maxInFlight: Int = 2, secondBatchMinimum: Int = 8) {
        self.pool = pool
        self.maxBatch = maxBatch
        self.maxInFlight = maxInFlight
        self.secondBatchMinimum = secondBatchMinimum
    }

    /// Appends `request` in the next batch; its result, or the error it would get alone.
    func append(_ request: AppendRequest) async throws -> GroupAppendResult {
        let plan = AppendPlan(commandID: request.commandID, expectations: request.expectations, events: request.events)
        try plan.validate()
        return try await withCheckedThrowingContinuation { continuation in
            let waiting = Waiting(
                plan: plan,
                reads: request.reads,
                rows: request.guardedRows,
                committed: request.committed,
                continuation: continuation
            )
            let starts = state.withLock { state -> Bool in
                state.queue.append(waiting)
                guard state.inFlight == 0 || (state.inFlight < maxInFlight && state.enoughForAnotherBatch(minimum: secondBatchMinimum))
                else { return false }
                state.inFlight += 1
                return true
            }
            if starts { startDrain() }
        }
    }

    /// A drain on the next free connection (its `inFlight` place already taken).
    private func startDrain() {
        pool.submit(work: { connection in self.drain(on: connection) }, failure: { error in self.noConnection(error) })
    }

    /// On a connection's own thread: sends batches until the queue is empty, answering each
    /// append from here (no task in between: one thread hop to the connection, one back to the
    /// caller, as for a plain query).
    private func drain(on connection: Connection) {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                // Another batch is on its way and few wait: leave them to it (the last one on its
                // way always takes whatever waits).
                if state.inFlight > 1 && !state.enoughForAnotherBatch(minimum: secondBatchMinimum) {
                    state.inFlight -= 1
                    return []
                }
                let batch = Array(state.queue.prefix(maxBatch))
                state.queue.removeFirst(batch.count)
                if batch.isEmpty { state.inFlight -= 1 } else { state.lastBatch = batch.count }
                return batch
            }
            if batch.isEmpty { return }
            if !run(batch, on: connection) { return }
        }
    }

    /// No connection for a drain (pool timeout or closed): the appends that no other drain will
    /// take get the error; nothing of theirs was sent.
    private func noConnection(_ error: any Error) {
        let failed = state.withLock { state -> [Waiting] in
            state.inFlight -= 1
            guard state.inFlight == 0 else { return [] }
            defer { state.queue.removeAll() }
            return state.queue
        }
        for waiting in failed { waiting.continuation.resume(throwing: error) }
    }

    /// Sends `batch` and answers its appends. False when the connection broke: this drain ends
    /// (the pool drops the connection) and another takes over what waits.
    private func run(_ batch: [Waiting], on connection: Connection) -> Bool {
        let outcomes: [GroupAppendResult?]
        do {
            outcomes = try Self.together(batch, on: connection)
        } catch {
            // Nothing of the batch is acknowledged: it failed (nothing committed), or its commit's
            // outcome is unknown (connection lost, the wait for the standby cut). Run alone, each
            // append finds its events or writes them; found ones wait for the standby first.
            outcomes = Array(repeating: nil, count: batch.count)
        }
        // Everything the batch committed is told before anyone is answered (and announces).
        for (waiting, outcome) in zip(batch, outcomes) {
            if let outcome { waiting.tellCommitted(outcome) }
        }
        var unanswered: [Waiting] = []
        for (waiting, outcome) in zip(batch, outcomes) {
            if let outcome {
                waiting.continuation.resume(returning: outcome)
            } else if connection.isUsable {
                waiting.answerAlone(on: connection)
            } else {
                unanswered.append(waiting)
            }
        }
        guard !unanswered.isEmpty else { return true }
        // The connection is gone: the rest run alone on others, and a new drain serves the queue.
        let starts = state.withLock { state -> Bool in
            state.inFlight -= 1
            guard !state.queue.isEmpty, state.inFlight == 0 else { return false }
            state.inFlight += 1
            return true
        }
        if starts { startDrain() }
        for waiting in unanswered {
            pool.submit(work: { connection in waiting.answerAlone(on: connection) }, failure: { waiting.continuation.resume(throwing: $0) })
        }
        return false
    }

    /// The batch in one pipeline, one implicit transaction: every stream's lock in one statement
    /// (which also sets generic plans where a statement takes arrays: `AppendPlan.lockWithGenericPlansSQL`), the
    /// appends' inserts (`AppendPlan.sharing`: all of them in one statement, but for those
    /// writing a stream another of them touches), then one read for all appends' reads. Nil for
    /// an append whose condition failed.
    ///
    /// The read comes after every insert of the batch and asks each stream from the lowest
    /// version any append knows; each append gets its streams' events past its own version.
    /// These may include a later append's events of the same batch: the same transaction commits
    /// them, so they are the stream's history all the same. (One read per append was a second
    /// statement per command, and concurrent commands mostly ask for the same users' streams.)
    private static func together(_ batch: [Waiting], on connection: Connection) throws -> [GroupAppendResult?] {
        // After the lock: the appends' inserts (those that may share one statement first, the
        // rest each on its own), then one statement per table of guarded
        // rows (each write and row sees whether its own append wrote), then one read.
        let plans = batch.map(\.plan)
        let (shared, after) = AppendPlan.sharing(plans)
        let sharing = shared.map { plans[$0] }
        var statements: [Connection.Statement] = []
        if !sharing.isEmpty { statements.append(AppendPlan.insertStatement(for: sharing)) }
        statements += after.map { plans[$0].insertStatement }
        statements += GuardedTable.statements(for: batch.flatMap(\.rows))
        var asked: [String: Int64] = [:]
        for waiting in batch {
            for (stream, version) in waiting.reads { asked[stream] = min(asked[stream] ?? version, version) }
        }
        if !asked.isEmpty { statements.append(EventLog.readStreamsStatement(after: asked)) }
        // Generic plans only where a statement takes arrays (a lone single-event append, with
        // scalars throughout, keeps its generic plan by itself and skips the setting).
        let genericPlans = statements.contains(where: \.takesArrays)
        statements.insert(AppendPlan.lockStatement(plans.flatMap(\.lockedStreams), genericPlans: genericPlans), at: 0)
        let results = try connection.pipeline(statements, chunkSize: Int.max)
        let read = asked.isEmpty ? [:] : try EventLog.streams(from: results[results.count - 1], asked: asked)
        var appended = [AppendResult?](repeating: nil, count: batch.count)
        var next = 1
        if !sharing.isEmpty {
            for (index, result) in zip(shared, try AppendPlan.results(of: results[next], for: sharing)) {
                appended[index] = result
            }
            next += 1
        }
        for index in after {
            appended[index] = try plans[index].result(of: results[next])
            next += 1
        }
        return zip(batch, appended).map { waiting, appended in
            var reads: [String: [RecordedEvent]] = [:]
            for (stream, version) in waiting.reads { reads[stream] = (read[stream] ?? []).filter { $0.version > version } }
            return appended.map { GroupAppendResult(appended: $0, reads: reads) }
        }
    }

    /// One append on its own, with the log's usual answers: a retried command id gets its first
    /// run's positions, a moved stream a version conflict naming it.
    static func alone(
        _ plan: AppendPlan,
        reads: [String: Int64],
        guarded: [Connection.Statement] = [],
        on connection: Connection
    ) throws -> GroupAppendResult {
        let appended: AppendResult
        do {
            appended = try plan.run(on: connection, guarded: guarded)
        } catch EventLogError.alreadyAppended {
            // Autocommit: the failed attempt is over; the first run's positions are readable.
            guard let first = try plan.firstRun(on: connection) else {
                throw EventLogError.versionConflict(stream: plan.writtenStreams[0], message: "concurrent duplicate")
            }
            appended = first
        } catch EventLogError.versionConflict(let stream, let message) {
            // A retried command finds its streams moved on, by its own first run.
            guard let first = try plan.firstRun(on: connection) else {
                throw EventLogError.versionConflict(
                    stream: stream.isEmpty ? try plan.conflictingStream(on: connection) : stream,
                    message: message
                )
            }
            appended = first
        }
        let read = reads.isEmpty ? [:] : try EventLog.readStreams(on: connection, after: reads)
        return GroupAppendResult(appended: appended, reads: read)
    }
}
