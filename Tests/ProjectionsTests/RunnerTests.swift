import Domain
import EventLog
import Foundation
import PersonalData
import Postgres
import PostgresTesting
import Projections
import Synchronization
import XCTest

/// The runner against a real PostgreSQL: catch-up, live following, crashes mid-batch, takeover.
final class RunnerTests: XCTestCase {
    func options(batch: Int = 200) -> ProjectionRunner.Options {
        var options = ProjectionRunner.Options()
        options.batchSize = batch
        options.failureBackoff = .milliseconds(20)
        options.standbyRetry = .milliseconds(20)
        options.pollInterval = .milliseconds(50)
        return options
    }

    func testCatchUpThenLiveReadModelsEqualAFreshFoldOfTheLog() async throws {
        let h = try Harness("runner_fold", seed: 7)
        try await h.append(1500)  // before the runner starts: catch-up
        let runner = ProjectionRunner(log: h.log, sealer: TestDatabase.sealer, connectionString: h.connectionString, options: options())
        runner.start()
        try await h.append(1500)  // while it runs: live
        let caughtUp = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        XCTAssertTrue(caughtUp)
        let status = try await runner.status()
        XCTAssertEqual(status.map(\.name), Projectors.names)
        XCTAssertTrue(status.allSatisfy { $0.checkpoint >= h.lastPosition && $0.lagEvents == 0 }, "\(status)")
        XCTAssertTrue(status.allSatisfy { $0.state == .live }, "\(status)")
        await runner.stop()

        let expected = h.expected()
        XCTAssertGreaterThan(expected.mates.count, 0)
        XCTAssertGreaterThan(expected.walks.count, 0)
        XCTAssertGreaterThan(expected.notifications.count, 0)
        assertSameRows(try await h.actual(), expected)
    }

    func testProjectorKilledMidBatchRestartsWithNoRowMissingOrDoubled() async throws {
        let h = try Harness("runner_kill", seed: 11)
        try await h.append(1200)
        // Each wrapped projector writes its rows, then has its own backend terminated before the
        // commit, on its 2nd and 4th batch: the batch and its checkpoint must both vanish.
        let kills = Counter()
        let killers: [any Projector] = Projectors.all.map {
            KillingProjector(inner: $0, connectionString: h.connectionString, killOnBatches: [2, 4], kills: kills)
        }
        let runner = ProjectionRunner(
            log: h.log,
            sealer: TestDatabase.sealer,
            connectionString: h.connectionString,
            projectors: killers,
            options: options(batch: 100)
        )
        runner.start()
        let caughtUp = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(120))
        XCTAssertTrue(caughtUp)
        await runner.stop()
        XCTAssertEqual(kills.count, 2 * Projectors.all.count, "every projector was killed twice mid-batch")
        assertSameRows(try await h.actual(), h.expected())
    }

    func testSecondRunnerStandsByAndTakesOverWhenTheOwnerStops() async throws {
        let h = try Harness("runner_takeover", seed: 3)
        try await h.append(300)
        let first = ProjectionRunner(log: h.log, sealer: TestDatabase.sealer, connectionString: h.connectionString, options: options())
        first.start()
        let firstCaughtUp = try await first.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        XCTAssertTrue(firstCaughtUp)
        let second = ProjectionRunner(log: h.log, sealer: TestDatabase.sealer, connectionString: h.connectionString, options: options())
        second.start()
        // The second one cannot own anything while the first lives.
        var standby = false
        for _ in 0..<500 where !standby {
            standby = try await second.status().allSatisfy { $0.state == .standby }
            if !standby { try await Task.sleep(for: .milliseconds(10)) }
        }
        XCTAssertTrue(standby)
        await first.stop()
        try await h.append(300)
        let secondCaughtUp = try await second.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        XCTAssertTrue(secondCaughtUp)
        let states = try await second.status().map(\.state)
        XCTAssertTrue(states.allSatisfy { $0 == .live || $0 == .catchingUp }, "\(states)")
        await second.stop()
        assertSameRows(try await h.actual(), h.expected())
    }

    /// Hundreds of read-your-writes waiters parked at once, each on its own position and set of
    /// projectors: each returns true only once the stored checkpoints reach its position; a
    /// position beyond the log times out; a cancelled waiter stops at once.
    func testManyWaitersEachResumedByTheBatchThatReachesIt() async throws {
        let h = try Harness("runner_waiters", seed: 13)
        let runner = ProjectionRunner(
            log: h.log,
            sealer: TestDatabase.sealer,
            connectionString: h.connectionString,
            options: options(batch: 50)
        )
        runner.start()
        let names = Projectors.names
        let early = Failures()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<300 {
                try await h.append(1)
                let position = h.lastPosition
                let wanted = index % 3 == 0 ? nil : [names[index % names.count]]
                group.addTask {
                    let reached = try await runner.waitUntil(position: position, projectors: wanted, timeout: .seconds(60))
                    guard reached else { return early.add("waiter \(index) timed out") }
                    let stored = try await runner.status().filter { wanted?.contains($0.name) ?? true }
                    if let behind = stored.first(where: { $0.checkpoint < position }) {
                        early.add("waiter \(index) resumed before \(behind.name) reached \(position)")
                    }
                }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(early.all.count, 0, early.all.prefix(5).joined(separator: "; "))

        let beyond = LogPosition(transactionID: UInt64(Int64.max), position: Int64.max)
        let timedOut = try await runner.waitUntil(position: beyond, timeout: .milliseconds(100))
        XCTAssertFalse(timedOut)
        let parked = Task { try await runner.waitUntil(position: beyond, timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(50))
        let clock = ContinuousClock()
        let cancelledAt = clock.now
        parked.cancel()
        _ = try? await parked.value
        XCTAssertLessThan(clock.now - cancelledAt, .seconds(5), "a cancelled waiter does not sit out its timeout")
        await runner.stop()
    }

    func testWaitUntilTimesOutWhenNothingProjects() async throws {
        let h = try Harness("runner_wait", seed: 5)
        try await h.append(5)
        let runner = ProjectionRunner(log: h.log, sealer: TestDatabase.sealer, connectionString: h.connectionString, options: options())
        // Not started: nothing moves the checkpoints.
        let reached = try await runner.waitUntil(position: h.lastPosition, projectors: ["mates"], timeout: .milliseconds(50))
        XCTAssertFalse(reached)
        let status = try await runner.status()
        XCTAssertEqual(status.first { $0.name == "mates" }?.lagEvents, Int64(h.appendedEvents))
        XCTAssertEqual(status.first { $0.name == "mates" }?.state, .stopped)
    }

    func testLagIsCountedUpToTheLimitAndEstimatedFromPositionsBeyondIt() async throws {
        let h = try Harness("runner_lag", seed: 9)
        try await h.append(40)
        // 100 positions lost, as to rolled-back appends: the count skips them, the estimate not.
        try await h.asOwner { connection in
            _ = try connection.execute(
                "SELECT setval(pg_get_serial_sequence('events', 'position'), (SELECT max(position) FROM events) + 100)"
            )
        }
        try await h.append(1)
        let events = Int64(h.appendedEvents)
        let counted = try await h.query { try ProjectorStatus.read(["mates"], exactUpTo: 1_000, on: $0) }
        XCTAssertEqual(counted.first?.lagEvents, events)
        let limit = Int(events / 3)
        let estimated = try await h.query { try ProjectorStatus.read(["mates"], exactUpTo: limit, on: $0) }
        XCTAssertEqual(estimated.first?.lagEvents, events + 100)
        XCTAssertEqual(estimated.first?.progress, .notStarted)

        let runner = ProjectionRunner(log: h.log, sealer: TestDatabase.sealer, connectionString: h.connectionString, options: options())
        runner.start()
        let caughtUp = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        XCTAssertTrue(caughtUp)
        await runner.stop()
        let atHead = try await h.query { try ProjectorStatus.read(["mates"], exactUpTo: limit, on: $0) }
        XCTAssertEqual(atHead.first?.lagEvents, 0)
        XCTAssertEqual(atHead.first?.progress, .caughtUp)
    }
}

/// A counter shared between tasks.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    @discardableResult func increment() -> Int { value.add(1, ordering: .relaxed).newValue }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A flag shared between tasks.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// Errors collected from several tasks.
final class Failures: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ failure: String) { list.withLock { $0.append(failure) } }
    var all: [String] { list.withLock { $0 } }
}

/// Wraps a projector; on chosen batches it terminates its own connection's backend after the
/// rows are written but before the commit, as a crash would.
struct KillingProjector: Projector {
    let inner: any Projector
    let connectionString: String
    let killOnBatches: Set<Int>
    let kills: Counter
    let batches = Counter()

    var name: String { inner.name }
    var tables: [String] { inner.tables }

    func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        try inner.apply(events, to: tables, on: connection, sealer: sealer)
        guard killOnBatches.contains(batches.increment()) else { return }
        kills.increment()
        let killer = try Connection(connectionString: connectionString)
        try killer.execute("SELECT pg_terminate_backend($1::int)", [connection.backendPID])
    }
}
