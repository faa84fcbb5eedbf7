import EventLog
import Foundation
import Postgres
import Projections

/// How far the read models are, read from their checkpoint rows (`projector_checkpoints`).
///
/// Reading the table rather than asking an in-process runner keeps read-your-writes right when
/// several gateway processes share one database and another process owns a projector.
public struct ProjectionProgress: Sendable {
    /// A faster way to wait, from a projection runner in this process: true once reached,
    /// false after the timeout.
    public typealias Waiter = @Sendable (LogPosition, [String], Duration) async throws -> Bool

    let pool: ConnectionPool
    let gate: DatabaseGate
    let waiter: Waiter?
    /// How often a waiting query looks at the checkpoints again (without a waiter).
    let pollInterval: Duration
    /// How long a query waits for its `Min-Log-Position` before `503 not_caught_up`.
    let readYourWritesTimeout: Duration

    public init(
        pool: ConnectionPool,
        gate: DatabaseGate,
        waiter: Waiter? = nil,
        pollInterval: Duration = .milliseconds(10),
        readYourWritesTimeout: Duration = .seconds(3)
    ) {
        self.pool = pool
        self.gate = gate
        self.waiter = waiter
        self.pollInterval = pollInterval
        self.readYourWritesTimeout = readYourWritesTimeout
    }

    /// Returns once every projector in `projectors` has applied `position`; throws
    /// `not_caught_up` after `timeout`, or `request_timeout` at the request's deadline
    /// (`ConnectionPool.deadline`) when that comes first.
    public func waitUntil(_ position: LogPosition, projectors: [String], timeout: Duration) async throws {
        let ownDeadline = ContinuousClock.now + timeout
        // The request's deadline, when it comes first, ends the wait as the request's timeout.
        let (deadline, givingUp) =
            if let request = ConnectionPool.deadline, request < ownDeadline {
                (request, APIError.requestTimeout)
            } else {
                (ownDeadline, APIError.notCaughtUp)
            }
        if try await reached(position, projectors: projectors) { return }
        // Not there yet. A position no command could have answered (its transaction has not
        // started, or it is past every event written) would only wait out the timeout: refuse it.
        guard try await exists(position) else {
            throw APIError.validation("Min-Log-Position", "Min-Log-Position is not a position of this log")
        }
        if let waiter {
            // In slices, so that a cancelled request (client gone) stops waiting soon.
            try await gate.admitted {
                while true {
                    try Task.checkCancellation()
                    let left = deadline - ContinuousClock.now
                    if left <= .zero { throw givingUp }
                    if try await waiter(position, projectors, min(left, .milliseconds(100))) { return }
                }
            }
            return
        }
        while true {
            if try await reached(position, projectors: projectors) { return }
            if ContinuousClock.now + pollInterval > deadline { throw givingUp }
            try await Task.sleep(for: pollInterval)
        }
    }

    /// Whether all of `projectors` are at or past `position` now. A missing checkpoint row is a
    /// projector that has applied nothing yet.
    func reached(_ position: LogPosition, projectors: [String]) async throws -> Bool {
        let names = projectors
        let reached = try await gate.withConnection(pool) { connection -> Int in
            try connection.execute(
                """
                SELECT count(*) FROM projector_checkpoints
                WHERE projector = ANY($1::text[]) AND (transaction_id, position) >= ($2::xid8, $3::bigint)
                """,
                [names, position.transactionID, position.position]
            ).first!.int(0)
        }
        return reached == Set(projectors).count
    }

    /// Whether `position` can be one a command answered: its transaction has started and its
    /// number is not past the newest event.
    func exists(_ position: LogPosition) async throws -> Bool {
        try await gate.withConnection(pool) { connection in
            try connection.execute(
                """
                SELECT $1::xid8 < pg_snapshot_xmax(pg_current_snapshot())
                   AND $2::bigint <= (SELECT coalesce(max(position), 0) FROM events)
                """,
                [String(position.transactionID), position.position]
            ).first.map { try $0.bool(0) } ?? false
        }
    }

    /// Every projector's checkpoint and lag (`Projectors.names`, in that order).
    public func status() async throws -> [ProjectorStatus] {
        try await gate.withConnection(pool) { try ProjectorStatus.read(Projectors.names, on: $0) }
    }
}
