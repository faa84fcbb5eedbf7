import Dispatch
import Logging

/// A bounded pool of connections with async acquire and a timeout.
///
/// Each pooled connection has its own serial dispatch queue and every libpq call made through
/// `withConnection` runs there, so blocking I/O never occupies Swift's cooperative threads.
/// Broken connections (server restart, terminated backend) are dropped, never handed out again.
public actor ConnectionPool {
    public let connectionString: String
    public let maxConnections: Int
    public let acquireTimeout: Duration
    private let logger: Logger

    private var idle: [PooledConnection] = []
    private var openCount = 0
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<PooledConnection?, any Error>)] = []
    private var nextWaiterID: UInt64 = 0
    private var closed = false

    public init(connectionString: String, maxConnections: Int = 10, acquireTimeout: Duration = .seconds(5),
                logger: Logger = Logger(label: "sniffmeet.postgres")) {
        precondition(maxConnections > 0)
        self.connectionString = connectionString
        self.maxConnections = maxConnections
        self.acquireTimeout = acquireTimeout
        self.logger = logger
    }

    /// A snapshot of the pool for metrics and overload decisions.
    public struct Statistics: Sendable {
        public var open: Int
        public var idle: Int
        public var waiting: Int
    }

    public var statistics: Statistics { Statistics(open: openCount, idle: idle.count, waiting: waiters.count) }

    /// Leases a connection, runs `body` on its own thread, and returns it to the pool.
    public nonisolated func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let lease = try await acquire()
        do {
            let value = try await lease.run(body)
            await release(lease)
            return value
        } catch {
            await release(lease)
            throw error
        }
    }

    /// Runs `body` inside a transaction on a leased connection.
    public nonisolated func withTransaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withConnection { connection in try connection.transaction(body) }
    }

    /// Closes idle connections and refuses new leases; leased ones close when returned.
    public func close() {
        closed = true
        openCount -= idle.count
        idle.removeAll()
        for waiter in waiters { waiter.continuation.resume(throwing: PostgresError.poolClosed) }
        waiters.removeAll()
    }

    // MARK: Leasing

    private func acquire() async throws -> PooledConnection {
        while true {
            if closed { throw PostgresError.poolClosed }
            if let candidate = idle.popLast() {
                if candidate.connection.isAliveWhenIdle() { return candidate }
                openCount -= 1
                logger.info("dropping a connection the server closed")
                continue
            }
            if openCount < maxConnections {
                return try await open()
            }
            if let handed = try await waitForRelease() { return handed }
            // nil: a slot was freed; loop and open one.
        }
    }

    private func open() async throws -> PooledConnection {
        openCount += 1
        do {
            return try await PooledConnection.connect(connectionString)
        } catch {
            openCount -= 1
            wakeOneWaiter()
            throw error
        }
    }

    private func waitForRelease() async throws -> PooledConnection? {
        nextWaiterID += 1
        let id = nextWaiterID
        let timeout = acquireTimeout
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            await self?.expireWaiter(id)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            waiters.append((id, continuation))
        }
    }

    private func expireWaiter(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: PostgresError.poolTimeout(waited: acquireTimeout))
    }

    private func release(_ lease: PooledConnection) {
        guard !closed, lease.connection.isUsable else {
            openCount -= 1
            wakeOneWaiter()
            return
        }
        if !waiters.isEmpty {
            waiters.removeFirst().continuation.resume(returning: lease)
        } else {
            idle.append(lease)
        }
    }

    /// A slot freed up: let the oldest waiter open a new connection itself.
    private func wakeOneWaiter() {
        if !waiters.isEmpty { waiters.removeFirst().continuation.resume(returning: nil) }
    }
}

/// A connection and the serial queue that owns it. `@unchecked Sendable` is sound because the
/// connection is only touched on `queue` (or by the pool while nobody leases it).
final class PooledConnection: @unchecked Sendable {
    let connection: Connection
    let queue: DispatchQueue

    private init(connection: Connection, queue: DispatchQueue) {
        self.connection = connection
        self.queue = queue
    }

    static func connect(_ connectionString: String) async throws -> PooledConnection {
        let queue = DispatchQueue(label: "sniffmeet.postgres.connection")
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result {
                    PooledConnection(connection: try Connection(connectionString: connectionString), queue: queue)
                })
            }
        }
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body(self.connection) }) }
        }
    }
}
