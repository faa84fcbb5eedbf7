import Domain
import EventLog
import Foundation
import Postgres
import PostgresTesting
import Projections
import Synchronization
import XCTest

/// Rebuilds into fresh tables and swaps them in while the live ones serve; verify.
final class RebuildTests: XCTestCase {
    func runnerOptions() -> ProjectionRunner.Options {
        var options = ProjectionRunner.Options()
        options.batchSize = 500
        options.failureBackoff = .milliseconds(20)
        options.pollInterval = .milliseconds(50)
        return options
    }

    func testRebuildWhileCommandsKeepArrivingSwapsInEveryEventAndQueriesNeverFail() async throws {
        let h = try Harness("rebuild_live", seed: 21, sealed: true)
        try await h.append(1500)
        let runner = ProjectionRunner(
            log: h.log,
            sealer: TestDatabase.sealer,
            connectionString: h.connectionString,
            options: runnerOptions()
        )
        runner.start()
        let caughtUp = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        XCTAssertTrue(caughtUp)
        let oidBefore = try await h.query { try $0.execute("SELECT 'walks'::regclass::oid::bigint").first!.int64(0) }

        let done = Flag()
        let queries = Counter()
        let failures = Failures()
        // Readers, as the gateway would query, all through the rebuild and its swap.
        let readers = (0..<2).map { _ in
            Task {
                while !done.isSet {
                    for table in ["profiles", "mates", "mate_requests", "walks", "notifications"] {
                        do {
                            _ = try await h.query { try $0.execute("SELECT count(*) FROM \(table)").first!.int(0) }
                            queries.increment()
                        } catch { failures.add("\(table): \(error)") }
                    }
                }
            }
        }
        // A writer, as clients would, all through the rebuild.
        let writer = Task { try await h.append(1500) }
        let job = RebuildJob(connectionString: h.ownerConnectionString, sealer: TestDatabase.sealer, batchSize: 200)
        let outcome = try await job.run(onThread: { false }, progress: { _ in })
        try await writer.value
        done.set()
        for reader in readers { await reader.value }

        guard case .swapped(let at, let events) = outcome else { return XCTFail("not swapped: \(outcome)") }
        XCTAssertGreaterThanOrEqual(events, 1500)
        XCTAssertGreaterThan(at, .start)
        XCTAssertEqual(failures.all, [])
        XCTAssertGreaterThan(queries.count, 0)
        let oidAfter = try await h.query { try $0.execute("SELECT 'walks'::regclass::oid::bigint").first!.int64(0) }
        XCTAssertNotEqual(oidBefore, oidAfter, "the walks table was replaced")
        let leftovers = try await h.query {
            try $0.execute("SELECT count(*) FROM pg_class WHERE relname LIKE '%\\_\\_rebuild%'").first!.int(0)
        }
        XCTAssertEqual(leftovers, 0)
        // After the swap the live projectors went on from the swapped-in checkpoint: every event
        // up to the swap came from the rebuild, the rest from the runner, none missing or twice.
        let finished = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        XCTAssertTrue(finished)
        await runner.stop()
        assertSameRows(try await h.actual(), h.expected())
    }

    func testASwappedInTableKeepsTheLiveTablesStorageParameters() async throws {
        let h = try Harness("rebuild_storage", seed: 5)
        try await h.append(100)
        func conversations() async throws -> (oid: Int64, options: String) {
            try await h.query { connection in
                let row = try connection.execute(
                    "SELECT oid::bigint, coalesce(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = 'chat_conversations'::regclass"
                ).first!
                return (try row.int64(0), try row.string(1))
            }
        }
        let before = try await conversations()
        XCTAssertEqual(before.options, "fillfactor=80", "schema 0036 leaves room for HOT updates")
        let job = RebuildJob(connectionString: h.ownerConnectionString, sealer: TestDatabase.sealer, batchSize: 200)
        guard case .swapped = try await job.run(onThread: { false }, progress: { _ in }) else { return XCTFail("not swapped") }
        let after = try await conversations()
        XCTAssertNotEqual(after.oid, before.oid, "the table was replaced")
        XCTAssertEqual(after.options, "fillfactor=80")
    }

    func testCancelledRebuildLeavesLiveTablesServingAndARerunResumes() async throws {
        let h = try Harness("rebuild_resume", seed: 8)
        try await h.append(1200)
        let runner = ProjectionRunner(
            log: h.log,
            sealer: TestDatabase.sealer,
            connectionString: h.connectionString,
            options: runnerOptions()
        )
        runner.start()
        let caughtUp = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        XCTAssertTrue(caughtUp)
        await runner.stop()
        let before = try await h.query { try ReadModelChecksum.compute(on: $0) }

        // Cancel ("Ctrl-C") after the second batch.
        let batches = Counter()
        let first = try await RebuildJob(connectionString: h.ownerConnectionString, sealer: TestDatabase.sealer, batchSize: 300).run(
            onThread: { batches.count >= 2 },
            progress: { if $0.phase == .catchingUp { batches.increment() } }
        )
        guard case .cancelled(let stoppedAt, let firstEvents) = first else { return XCTFail("not cancelled: \(first)") }
        XCTAssertEqual(firstEvents, 600)
        let afterCancel = try await h.query { try ReadModelChecksum.compute(on: $0) }
        XCTAssertEqual(afterCancel, before, "live tables untouched")
        let kept = try await h.query { try Checkpoints.read("walks__rebuild", on: $0) }
        XCTAssertEqual(kept, stoppedAt, "the fresh tables keep their checkpoint")

        let second = try await RebuildJob(connectionString: h.ownerConnectionString, sealer: TestDatabase.sealer, batchSize: 300).run(
            onThread: { false },
            progress: { _ in }
        )
        guard case .swapped(let at, let secondEvents) = second else { return XCTFail("not swapped: \(second)") }
        XCTAssertEqual(at, h.lastPosition)
        XCTAssertEqual(firstEvents + secondEvents, h.appendedEvents, "the rerun read only what the first run had not")
        let after = try await h.query { try ReadModelChecksum.compute(on: $0) }
        XCTAssertEqual(after, before)
        assertSameRows(try await h.actual(), h.expected())
    }

    func testVerifyFindsNoDifferenceThenReportsTamperedRows() async throws {
        let h = try Harness("verify", seed: 13, sealed: true)
        try await h.append(800)
        let runner = ProjectionRunner(
            log: h.log,
            sealer: TestDatabase.sealer,
            connectionString: h.connectionString,
            options: runnerOptions()
        )
        runner.start()
        let caughtUp = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        XCTAssertTrue(caughtUp)
        await runner.stop()

        let clean = try Verifier(connectionString: h.connectionString, sealer: TestDatabase.sealer).run()
        XCTAssertEqual(
            clean.map(\.table),
            [
                "profiles", "mates", "mate_requests", "walks", "notifications", "notification_senders", "blocks", "reports",
                "walk_logs", "chat_messages", "chat_conversations", "operator_actions",
            ]
        )
        XCTAssertEqual(clean.map(\.differingRows), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertTrue(clean.allSatisfy { $0.liveRows == $0.expectedRows && $0.checkpoint == h.lastPosition })

        try await h.query { c in
            try c.execute("UPDATE walks SET status = 'tampered' WHERE walk_id = (SELECT min(walk_id::text)::uuid FROM walks)")
            try c.execute("DELETE FROM mates WHERE (user_id, mate_id) = (SELECT user_id, mate_id FROM mates ORDER BY 1, 2 LIMIT 1)")
        }
        let dirty = try Verifier(connectionString: h.connectionString, sealer: TestDatabase.sealer).run()
        let byTable = Dictionary(uniqueKeysWithValues: dirty.map { ($0.table, $0) })
        XCTAssertEqual(byTable["walks"]?.differingRows, 2, "the right row missing, the tampered one unexpected")
        XCTAssertEqual(byTable["mates"]?.differingRows, 1)
        XCTAssertEqual(byTable["walks"]?.samples.filter { $0.side == .unexpectedInLive }.count, 1)
        XCTAssertTrue(byTable["walks"]?.samples.contains { $0.row.contains("tampered") } ?? false)
        XCTAssertEqual(byTable["profiles"]?.differingRows, 0)
    }

    /// The bar: 10,000 commands, verify finds nothing, and rebuilding every read model
    /// (into fresh tables, and from scratch by the runner) gives the same checksums.
    func testTenThousandCommandsVerifyCleanAndRebuildsGiveIdenticalChecksums() async throws {
        let h = try Harness("ten_thousand", seed: 99, users: 200)
        let runner = ProjectionRunner(
            log: h.log,
            sealer: TestDatabase.sealer,
            connectionString: h.connectionString,
            options: runnerOptions()
        )
        runner.start()
        try await h.append(10_000)
        let caughtUp = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(120))
        XCTAssertTrue(caughtUp)
        await runner.stop()
        assertSameRows(try await h.actual(), h.expected())
        let reports = try Verifier(connectionString: h.connectionString, sealer: TestDatabase.sealer).run()
        XCTAssertEqual(reports.map(\.differingRows).reduce(0, +), 0)
        let live = try await h.query { try ReadModelChecksum.compute(on: $0) }

        let outcome = try await RebuildJob(connectionString: h.ownerConnectionString, sealer: TestDatabase.sealer).run(
            onThread: { false },
            progress: { _ in }
        )
        XCTAssertEqual(outcome, .swapped(at: h.lastPosition, events: h.appendedEvents))
        let rebuilt = try await h.query { try ReadModelChecksum.compute(on: $0) }
        XCTAssertEqual(rebuilt, live)

        // Dropped outright: empty tables, checkpoints back to the start, the runner replays.
        try await h.asOwner { c in
            try c.execute("TRUNCATE \(Projectors.all.flatMap(\.tables).joined(separator: ", "))")
            try c.execute("UPDATE projector_checkpoints SET transaction_id = '0', position = 0")
        }
        let again = ProjectionRunner(
            log: h.log,
            sealer: TestDatabase.sealer,
            connectionString: h.connectionString,
            options: runnerOptions()
        )
        again.start()
        let replayed = try await again.waitUntil(position: h.lastPosition, timeout: .seconds(120))
        XCTAssertTrue(replayed)
        await again.stop()
        let replayedSums = try await h.query { try ReadModelChecksum.compute(on: $0) }
        XCTAssertEqual(replayedSums, live)
    }
}
