import Foundation
import Postgres
import Synchronization

/// Bounds how many requests may wait for the database at once.
///
/// The pool already bounds connections; without this gate, an overload would queue requests
/// in the pool until each timed out. Past `limit` waiting requests the answer is an immediate
/// `503 overloaded`, which lets clients back off and keeps latency of admitted requests sane.
public final class DatabaseGate: Sendable {
    public let limit: Int
    private let inFlight = Atomic<Int>(0)

    public init(limit: Int) {
        self.limit = limit
    }

    /// Requests currently holding or waiting for a connection.
    public var current: Int { inFlight.load(ordering: .relaxed) }

    /// Runs `body` on a pooled connection if the gate admits it; else throws `overloaded`.
    public func withConnection<T: Sendable>(_ pool: ConnectionPool, _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T
    {
        try await admitted {
            try await Self.onReplicaOrPrimary(pool) { try await $0.withConnection(body) }
        }
    }

    /// Runs a read-only `query` (pipelined with others under load) if the gate admits it.
    public func run<Value: Sendable>(_ query: Query<Value>, on pool: ConnectionPool) async throws -> Value {
        try await admitted {
            try await Self.onReplicaOrPrimary(pool) { try await $0.run(query) }
        }
    }

    /// Runs `work` on `pool`; when that is the request's replica and the read fails for a passing
    /// reason (replica gone, a recovery conflict), the primary answers it instead, and the
    /// replica is left out until its next good lag check.
    private static func onReplicaOrPrimary<T: Sendable>(
        _ pool: ConnectionPool,
        _ work: (ConnectionPool) async throws -> T
    ) async throws -> T {
        guard let choice = ReadChoice.current, choice.replicas.pool === pool else { return try await work(pool) }
        do {
            let value = try await work(pool)
            choice.replicas.countReplicaRead()
            return value
        } catch let error as PostgresError where error.isTransient {
            choice.replicas.readFailed(error)
            choice.usePrimary()
            return try await work(choice.primary)
        }
    }

    /// Runs `body` (which waits for the database some other way) if the gate admits it.
    public func admitted<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let now = inFlight.wrappingAdd(1, ordering: .acquiring).newValue
        defer { inFlight.wrappingSubtract(1, ordering: .releasing) }
        guard now <= limit else { throw APIError.overloaded }
        return try await body()
    }
}
