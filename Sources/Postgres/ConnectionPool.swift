import Dispatch
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
/// Work that waits longer than `acquireTimeout` fails with `poolTimeout`; work whose task is
/// cancelled while waiting fails with `CancellationError` and never runs. Broken connections
/// (server restart, terminated backend) are dropped, never used again.
public final class ConnectionPool: Sendable {
    public let connectionString: String
    public let maxConnections: Int
    public let acquireTimeout: Duration
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var idle: [PooledConnection] = []
        var openCount = 0
        var waiting: [PoolJob] = []
        var closed = false

        /// The oldest waiting job nobody cancelled or timed out; settled ones are dropped.
        mutating func takeWaiting() -> PoolJob? {
            while !waiting.isEmpty {
                let candidate = waiting.removeFirst()
                if !candidate.isSettled { return candidate }
            }
            return nil
        }
    }

    public init(
        connectionString: String,
        maxConnections: Int = 10,
        acquireTimeout: Duration = .seconds(5),
        logger: Logger = Logger(label: "sniffmeet.postgres")
    ) {
        precondition(maxConnections > 0)
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
                    deadline: .now + acquireTimeout,
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
            job.run(on: connection.connection)
            let usable = connection.connection.isUsable
            let after = state.withLock { state -> AfterWork in
                guard usable, !state.closed else { return .drop }
                if let next = state.takeWaiting() { return .serve(next) }
                state.idle.append(connection)
                return .idle
            }
            switch after {
            case .serve(let next): job = next
            case .idle: return
            case .drop: return slotFreed()
            }
        }
    }

    private enum AfterWork {
        case serve(PoolJob)
        case idle
        case drop
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
        for job in expired { job.fail(PostgresError.poolTimeout(waited: acquireTimeout)) }
        return open
    }
}

/// One piece of work for the pool. Exactly one of running it, cancelling it, timing it out or
/// closing the pool settles it; whoever comes later finds it settled and does nothing.
final class PoolJob: Sendable {
    let deadline: ContinuousClock.Instant
    private let settled = Atomic<Bool>(false)
    private let work: @Sendable (Connection) -> Void
    private let failure: @Sendable (any Error) -> Void

    init(
        deadline: ContinuousClock.Instant,
        work: @escaping @Sendable (Connection) -> Void,
        failure: @escaping @Sendable (any Error) -> Void
    ) {
        self.deadline = deadline
        self.work = work
        self.failure = failure
    }

    var isSettled: Bool { settled.load(ordering: .acquiring) }

    func run(on connection: Connection) {
        if settle() { work(connection) }
    }

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
