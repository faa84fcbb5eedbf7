import EventLog
import Foundation
import Postgres
import PostgresTesting
import Synchronization
import XCTest

/// Under synchronous replication a commit is visible on the primary before the standby has it,
/// and a commit whose wait for the standby is cancelled stays committed on the primary alone,
/// with nothing but a WARNING to say so. Such a commit must never be acknowledged.
final class SyncCommitTests: XCTestCase {
    func testACancelledWaitForTheStandbyIsNeverAcknowledged() async throws {
        let cluster = try ReplicatedCluster()
        defer { cluster.stop() }
        // A synchronous standby that is not there: every commit waits for it.
        try cluster.primary.setAndReload("synchronous_standby_names", "absent")
        let ownerURL = cluster.url(cluster.primary, user: EmbeddedPostgres.ownerLogin)
        let pool = ConnectionPool(connectionString: ownerURL, maxConnections: 4)
        let log = EventLog(pool: pool)
        let commandID = UUID()
        let event = NewEvent(stream: "sync-1", type: "thing_happened", data: Data(#"{"n":1}"#.utf8))

        // Cancels every commit that waits for the standby, as an operator's pg_cancel_backend
        // or a client's cancel would, until the append returns.
        let cancels = Atomic<Int>(0)
        let canceller = Task.detached {
            let admin = try Connection(connectionString: cluster.primary.connectionString())
            while !Task.isCancelled {
                let cancelled = try admin.execute(
                    "SELECT count(*) FILTER (WHERE pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'"
                ).first!.int(0)
                cancels.add(cancelled, ordering: .relaxed)
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        do {
            let result = try await log.append(commandID: commandID, expectations: ["sync-1": .noStream], events: [event])
            XCTFail("acknowledged a commit the standby never confirmed: \(result)")
        } catch PostgresError.commitUnconfirmed {
        }
        canceller.cancel()
        _ = await canceller.result
        XCTAssertGreaterThan(cancels.load(ordering: .relaxed), 0)
        // It is committed on the primary all the same: exactly what may not be acknowledged.
        let local = try Connection(connectionString: ownerURL).execute("SELECT count(*) FROM events WHERE stream_id = 'sync-1'")
        XCTAssertEqual(try local.first!.int(0), 1)

        // With the standby listed, the retry finds its events and answers only once a write of
        // its own is confirmed by the standby, which then has the events too.
        try cluster.primary.setAndReload("synchronous_standby_names", "standby")
        let retried = try await log.append(commandID: commandID, expectations: ["sync-1": .noStream], events: [event])
        XCTAssertTrue(retried.replayed)
        let onStandby = try Connection(connectionString: cluster.url(cluster.standby, user: EmbeddedPostgres.ownerLogin))
        // Flushed on the standby at acknowledgement; replayed moments later.
        try cluster.waitForStandby()
        XCTAssertEqual(try onStandby.execute("SELECT count(*) FROM events WHERE stream_id = 'sync-1'").first!.int(0), 1)
        await pool.close()
    }

    /// The gateway's connections carry a `statement_timeout`. An append's commit must wait for
    /// the synchronous standby past it: a timeout that cancelled that wait would leave every
    /// command of a slow standby's moment unacknowledged. An append commits implicitly at the
    /// pipeline's sync point, after PostgreSQL stops the statement timer (`finish_xact_command`);
    /// this holds both ways an append commits to that, for three times the timeout: a
    /// group-committed batch, and an append on an idle connection.
    func testAnAppendsWaitForTheStandbyOutlastsTheStatementTimeout() async throws {
        let cluster = try ReplicatedCluster()
        defer { cluster.stop() }
        try cluster.primary.setAndReload("synchronous_standby_names", "absent")
        let timeoutMilliseconds = 300
        let ownerURL = cluster.url(cluster.primary, user: EmbeddedPostgres.ownerLogin)
        let timedURL = ownerURL + " options='-c statement_timeout=\(timeoutMilliseconds)'"
        XCTAssertEqual(try Connection(connectionString: timedURL).execute("SHOW statement_timeout").first!.string(0), "300ms")
        let pool = ConnectionPool(connectionString: timedURL, maxConnections: 4)
        let log = EventLog(pool: pool)
        let events = (1...3).map { NewEvent(stream: "timed-\($0)", type: "thing_happened", data: Data(#"{"n":1}"#.utf8)) }

        let grouped = Task { try await log.append(commandID: UUID(), expectations: ["timed-1": .noStream], events: [events[0]]) }
        let idle = Task.detached {
            try EventLog.append(
                on: try Connection(connectionString: timedURL),
                commandID: UUID(),
                expectations: ["timed-2": .noStream, "timed-3": .noStream],
                events: Array(events[1...])
            )
        }
        // Both commits wait for the absent standby for three times the timeout, then it comes.
        let admin = try Connection(connectionString: cluster.primary.connectionString())
        let deadline = ContinuousClock.now + .seconds(10)
        while try admin.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").first!.int(0) < 2 {
            XCTAssertLessThan(ContinuousClock.now, deadline, "both appends should be waiting for the standby")
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(3 * timeoutMilliseconds))
        XCTAssertEqual(try admin.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").first!.int(0), 2)
        try cluster.primary.setAndReload("synchronous_standby_names", "standby")

        let first = try await grouped.value
        XCTAssertEqual(first.positions.count, 1)
        XCTAssertFalse(first.replayed)
        let second = try await idle.value
        XCTAssertEqual(second.positions.count, 2)
        await pool.close()
    }

    func testAConnectionLostDuringCommitIsNotAcknowledged() throws {
        let cluster = try ReplicatedCluster()
        defer { cluster.stop() }
        try cluster.primary.setAndReload("synchronous_standby_names", "absent")
        let ownerURL = cluster.url(cluster.primary, user: EmbeddedPostgres.ownerLogin)
        let connection = try Connection(connectionString: ownerURL)
        let pid = connection.backendPID
        let killer = Thread {
            // The COMMIT waits for the absent standby; its session is ended under it.
            let admin = try? Connection(connectionString: cluster.primary.connectionString())
            for _ in 0..<200 {
                let waiting =
                    (try? admin?.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'SyncRep'", [pid]))??
                    .first.flatMap { try? $0.int(0) }
                if waiting == 1 { break }
                usleep(20_000)
            }
            _ = try? admin?.execute("SELECT pg_terminate_backend($1)", [pid])
        }
        killer.start()
        XCTAssertThrowsError(
            try connection.transaction { connection in
                try connection.execute(
                    "INSERT INTO replication_fence (id, written_at) VALUES (true, now()) ON CONFLICT (id) DO UPDATE SET written_at = now()"
                )
            }
        ) { error in
            guard case PostgresError.commitUnconfirmed = error else { return XCTFail("\(error)") }
        }
        XCTAssertFalse(connection.isUsable)
    }
}
