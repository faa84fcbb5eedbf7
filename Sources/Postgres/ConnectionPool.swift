import Dispatch
import Foundation  // sched_yield
import Logging
import Synchronization

/// A bounded pool of connections that serves queued work on the connections' own threads.
///
/// Each pooled connection has its own serial dispatch queue, and every libpq call made through
/// `withConnection` runs there, so blocking I/O never occupies Swift's cooperative threads.
///
/// Work waits in one first-come queue, and a connection that finishes a piece of work takes the
/// next one itself, on its own thread. Handing the connection back to a waiting task instead
/// (lease, resume the task, let it dispatch to the connection's queue) left each connection
/// idle for two thread hops per query: under `scripts/bench-http` the CPUs sat partly idle while
/// 64 requests waited for 4 connections.
///
/// A connection that runs out of work looks for more for a moment (`lingerBudget`, 300 µs)
/// before it goes idle, yielding its CPU in between: a caller that sends its next query soon
/// after its answer (a writer appending one command after another, a busy server) then finds
/// it awake instead of waking an idle connection's thread. Measured: `GET /v1/me/mates` and
/// walk sends about 5 % more per second, `bench append` with one writer 0.71–0.75x of pgbench
/// where it was 0.62–0.70x (docs/benchmarks.md).
///
/// Work that waits longer than `acquireTimeout`, or past its task's `deadline`, fails with
/// `poolTimeout`; work whose task is cancelled while waiting fails with `CancellationError` and
/// never runs. Broken connections (server restart, terminated backend) are dropped, never used
/// again.
public final class ConnectionPool: Sendable {
    /// The latest moment the current task's work may still wait for a connection (a request's
    /// deadline, which the gateway sets around each request): past it, waiting work fails with
    /// `poolTimeout` as past `acquireTimeout`. A task-local value rather than a cancelled child
    /// task per request: that child (its allocation and two more executor hops) was 5–8 % of a
    /// `GET /v1/me/mates`'s server CPU. Work already running is not cut: `statement_timeout`
    /// bounds it. Work handed over without a waiting task (`submit(work:failure:)`, a group
    /// commit's drain serving many callers) keeps `acquireTimeout` alone.
    @TaskLocal public static var deadline: ContinuousClock.Instant?

    public let connectionString: String
    public let maxConnections: Int
    public let acquireTimeout: Duration
    /// How long a connection out of work looks for more before it goes idle (`linger`); zero
    /// for never.
    public let lingerBudget: Duration
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var idle: [PooledConnection] = []
        var openCount = 0
        var waiting: [PoolJob] = []
        var closed = false
        /// Until when a connection that ran out of work looks for more before it goes idle
        /// (`linger`): new work waits for it rather than wake another connection's thread.
        var lingeringUntil: ContinuousClock.Instant?

        /// The oldest waiting job nobody cancelled or timed out; settled ones are dropped.
        mutating func takeWaiting() -> PoolJob? {
            while !waiting.isEmpty {
                let candidate = waiting.removeFirst()
                if !candidate.isSettled { return candidate }
            }
            return nil
        }

        /// Up to `limit` waiting queries, oldest first, to share a pipeline; other work keeps its place.
        mutating func takeWaitingQueries(limit: Int) -> [PoolJob] {
            var taken: [PoolJob] = []
            waiting.removeAll { job in
                guard taken.count < limit, job.statement != nil else { return false }
                if !job.isSettled { taken.append(job) }
                return true
            }
            return taken
        }
    }

    /// Most queries one pipeline carries.
    static let maxPipelinedQueries = 32

    public init(
        connectionString: String,
        maxConnections: Int = 10,
        acquireTimeout: Duration = .seconds(5),
        lingerBudget: Duration = .microseconds(300),
        logger: Logger = Logger(label: "sniffmeet.postgres")
    ) {
        precondition(maxConnections > 0)
        self.lingerBudget = lingerBudget
        self.connectionString = connectionString
        self.maxConnections = maxConnections
        self.acquireTimeout = acquireTimeout
        self.logger = logger
        startTimeoutSweeper()
    }

    /// A snapshot of the pool for metrics and overload decisions.
    public struct Statistics: Sendable {
        public var open: Int
        public var idle: Int
        public var waiting: Int
    }

    public var statistics: Statistics {
        state.withLock { Statistics(open: $0.openCount, idle: $0.idle.count, waiting: $0.waiting.count) }
    }

    /// Runs `body` on a pooled connection, on that connection's own thread.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let slot = JobSlot()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let created = PoolJob(
                    deadline: waitDeadline(),
                    work: { connection in continuation.resume(with: Result { try body(connection) }) },
                    failure: { continuation.resume(throwing: $0) }
                )
                slot.set(created)
                // Cancelled before it was queued: the handler below may have run already.
                if Task.isCancelled { return created.fail(CancellationError()) }
                submit(created)
            }
        } onCancel: {
            slot.get()?.fail(CancellationError())
        }
    }

    /// Runs a read-only `query`. Under load, the queries waiting for a connection go to
    /// PostgreSQL together, in one pipeline and one implicit transaction: one round trip and one
    /// wake-up of the server process for all of them instead of one each. A query that a
    /// failing neighbour aborted runs again alone, so each gets its own answer.
    ///
    /// Read-only: a write in a shared implicit transaction would roll back with a neighbour's error.
    public func run<Value: Sendable>(_ query: Query<Value>) async throws -> Value {
        let slot = JobSlot()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let read = query.read
                let created = PoolJob(
                    deadline: waitDeadline(),
                    statement: query.statement,
                    answer: { outcome in continuation.resume(with: Result { try read(try outcome.get()) }) },
                    failure: { continuation.resume(throwing: $0) }
                )
                slot.set(created)
                if Task.isCancelled { return created.fail(CancellationError()) }
                submit(created)
            }
        } onCancel: {
            slot.get()?.fail(CancellationError())
        }
    }

    /// Until when the current task's work waits for a connection: `acquireTimeout` from now, or
    /// the task's `deadline` when that comes first.
    private func waitDeadline() -> ContinuousClock.Instant {
        let acquired = ContinuousClock.now + acquireTimeout
        guard let deadline = Self.deadline else { return acquired }
        return min(acquired, deadline)
    }

    /// Runs `body` on a pooled connection's own thread with no task waiting for it: for work
    /// that answers its callers itself, as group commit resumes each append's continuation from
    /// the connection's thread (an awaiting task in between cost two more thread hops per
    /// batch). `failure` gets the error when no connection could be had (timeout, pool closed).
    public func submit(work body: @escaping @Sendable (Connection) -> Void, failure: @escaping @Sendable (any Error) -> Void) {
        submit(PoolJob(deadline: .now + acquireTimeout, work: body, failure: failure))
    }

    /// Runs `body` inside a transaction on a pooled connection.
    public func withTransaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withConnection { connection in try connection.transaction(body) }
    }

    /// Closes idle connections and fails waiting work; busy connections close when they finish.
    public func close() async {
        let waiting = state.withLock { state -> [PoolJob] in
            state.closed = true
            state.openCount -= state.idle.count
            state.idle.removeAll()
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for job in waiting { job.fail(PostgresError.poolClosed) }
    }

    // MARK: Serving work

    private enum Placement {
        case failed(any Error)
        case idleConnection(PooledConnection)
        case newConnection
        case queued
    }

    private func submit(_ job: PoolJob) {
        let placement = state.withLock { state -> Placement in
            if state.closed { return .failed(PostgresError.poolClosed) }
            // One job for a lingering connection; more at once go to idle ones, as usual.
            if let until = state.lingeringUntil, state.waiting.isEmpty, ContinuousClock.now < until {
                state.waiting.append(job)
                return .queued
            }
            if let connection = state.idle.popLast() { return .idleConnection(connection) }
            if state.openCount < maxConnections {
                state.openCount += 1
                return .newConnection
            }
            state.waiting.append(job)
            return .queued
        }
        switch placement {
        case .failed(let error): job.fail(error)
        case .idleConnection(let connection): connection.queue.async { self.serve(job, on: connection, fromIdle: true) }
        case .newConnection: open(for: job)
        case .queued: break
        }
    }

    /// Opens a connection (its slot is already counted) and serves `job` on it.
    private func open(for job: PoolJob) {
        let queue = DispatchQueue(label: "sniffmeet.postgres.connection")
        queue.async {
            do {
                let connection = PooledConnection(connection: try Connection(connectionString: self.connectionString), queue: queue)
                self.serve(job, on: connection, fromIdle: false)
            } catch {
                job.fail(error)
                self.slotFreed()
            }
        }
    }

    /// On `connection`'s thread: runs `first`, then whatever waits, until nothing does.
    private func serve(_ first: PoolJob, on connection: PooledConnection, fromIdle: Bool) {
        if fromIdle, !connection.connection.isAliveWhenIdle() {
            logger.info("dropping a connection the server closed")
            slotFreed()
            return submit(first)
        }
        var job = first
        while true {
            if job.statement != nil {
                let more = state.withLock { $0.takeWaitingQueries(limit: Self.maxPipelinedQueries - 1) }
                runQueries([job] + more, on: connection.connection)
            } else {
                job.run(on: connection.connection)
            }
            let usable = connection.connection.isUsable
            var after = state.withLock { state -> AfterWork in
                guard usable, !state.closed else { return .drop }
                if let next = state.takeWaiting() { return .serve(next) }
                if lingerBudget > .zero, state.lingeringUntil == nil {
                    state.lingeringUntil = .now + lingerBudget
                    return .linger
                }
                state.idle.append(connection)
                return .idle
            }
            if case .linger = after { after = linger(connection) }
            switch after {
            case .serve(let next): job = next
            case .linger, .idle: return  // `linger` never answers `.linger`
            case .drop: return slotFreed()
            }
        }
    }

    /// Sends the queries still wanted in one pipeline and answers each.
    private func runQueries(_ jobs: [PoolJob], on connection: Connection) {
        let claimed = jobs.filter { $0.claim() }
        guard claimed.count > 1 else {
            for job in claimed { job.answerAlone(on: connection) }
            return
        }
        do {
            let outcomes = try connection.pipelineOutcomes(claimed.map { $0.statement! }, syncEach: false)
            for (job, outcome) in zip(claimed, outcomes) {
                if case .failure(.pipelineAborted) = outcome {
                    job.answerAlone(on: connection)
                } else {
                    job.answer(outcome.mapError { $0 })
                }
            }
        } catch {
            for job in claimed { job.answer(.failure(error)) }
        }
    }

    private enum AfterWork {
        case serve(PoolJob)
        case linger
        case idle
        case drop
    }

    /// On `connection`'s thread, out of work: looks for the next job for up to `lingerBudget`
    /// (meanwhile `submit` queues work for it), then goes idle. A caller that sends its next
    /// query tens of microseconds after its answer then finds this thread awake: waking an
    /// idle connection's thread for it costs more than the look.
    private func linger(_ connection: PooledConnection) -> AfterWork {
        while true {
            let after = state.withLock { state -> AfterWork? in
                if let next = state.takeWaiting() {
                    state.lingeringUntil = nil
                    return .serve(next)
                }
                if state.closed {
                    state.lingeringUntil = nil
                    return .drop
                }
                guard let until = state.lingeringUntil, ContinuousClock.now < until else {
                    state.lingeringUntil = nil
                    state.idle.append(connection)
                    return .idle
                }
                return nil
            }
            if let after { return after }
            sched_yield()
        }
    }

    /// A connection went away: open a new one for the oldest waiting work, if any.
    private func slotFreed() {
        let next = state.withLock { state -> PoolJob? in
            state.openCount -= 1
            guard !state.closed, let next = state.takeWaiting() else { return nil }
            state.openCount += 1
            return next
        }
        if let next { open(for: next) }
    }

    // MARK: Timeouts

    /// One task for all waiting work: a timer per acquire cost more than the acquire itself.
    private func startTimeoutSweeper() {
        let tick = max(Duration.milliseconds(10), min(.milliseconds(100), acquireTimeout / 4))
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: tick)
                guard let self, self.failExpiredWaits(at: .now) else { return }
            }
        }
    }

    /// Fails waiting work past its deadline; false once the pool is closed.
    private func failExpiredWaits(at now: ContinuousClock.Instant) -> Bool {
        let (expired, open) = state.withLock { state -> ([PoolJob], Bool) in
            var expired: [PoolJob] = []
            state.waiting.removeAll { job in
                if job.isSettled { return true }
                if job.deadline <= now {
                    expired.append(job)
                    return true
                }
                return false
            }
            return (expired, !state.closed)
        }
        for job in expired { job.fail(PostgresError.poolTimeout(waited: now - job.queued)) }
        return open
    }
}

/// One piece of work for the pool. Exactly one of running it, cancelling it, timing it out or
/// closing the pool settles it; whoever comes later finds it settled and does nothing.
final class PoolJob: Sendable {
    let deadline: ContinuousClock.Instant
    let queued = ContinuousClock.now
    /// Set for a query (`ConnectionPool.run`): it may share a pipeline with other queries.
    let statement: Connection.Statement?
    private let settled = Atomic<Bool>(false)
    private let work: @Sendable (Connection) -> Void
    private let answerQuery: @Sendable (Result<QueryResult, any Error>) -> Void
    private let failure: @Sendable (any Error) -> Void

    init(
        deadline: ContinuousClock.Instant,
        work: @escaping @Sendable (Connection) -> Void,
        failure: @escaping @Sendable (any Error) -> Void
    ) {
        self.deadline = deadline
        self.statement = nil
        self.work = work
        self.answerQuery = { _ in }
        self.failure = failure
    }

    init(
        deadline: ContinuousClock.Instant,
        statement: Connection.Statement,
        answer: @escaping @Sendable (Result<QueryResult, any Error>) -> Void,
        failure: @escaping @Sendable (any Error) -> Void
    ) {
        self.deadline = deadline
        self.statement = statement
        self.work = { connection in answer(Result { try connection.execute(statement) }) }
        self.answerQuery = answer
        self.failure = failure
    }

    var isSettled: Bool { settled.load(ordering: .acquiring) }

    func run(on connection: Connection) {
        if settle() { work(connection) }
    }

    /// Takes a query for running; false when it was cancelled, timed out or failed meanwhile.
    func claim() -> Bool { settle() }

    /// Answers a claimed query.
    func answer(_ outcome: Result<QueryResult, any Error>) { answerQuery(outcome) }

    /// Runs a claimed query by itself and answers it.
    func answerAlone(on connection: Connection) { work(connection) }

    func fail(_ error: any Error) {
        if settle() { failure(error) }
    }

    private func settle() -> Bool {
        settled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}

/// A connection and the serial queue that owns it. `@unchecked Sendable` is sound because the
/// connection is only touched on `queue` (or by the pool while nobody uses it).
final class PooledConnection: @unchecked Sendable {
    let connection: Connection
    let queue: DispatchQueue

    init(connection: Connection, queue: DispatchQueue) {
        self.connection = connection
        self.queue = queue
    }
}

/// The job of one `withConnection` call, set inside the continuation's closure and read by its
/// cancellation handler, which may run before, during or after that.
private final class JobSlot: Sendable {
    private let job = Mutex<PoolJob?>(nil)
    func set(_ value: PoolJob) { job.withLock { $0 = value } }
    func get() -> PoolJob? { job.withLock { $0 } }
}
