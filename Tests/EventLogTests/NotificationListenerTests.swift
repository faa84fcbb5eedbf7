import EventLog
import Foundation
import Postgres
import PostgresTesting
import Synchronization
import XCTest

/// One listener follows several channels on one connection and hands each channel's payloads
/// to its own handler, in order; after connecting it tells every handler to look again.
final class NotificationListenerTests: XCTestCase {
    func testOneConnectionServesEveryChannelWithItsPayloads() async throws {
        let connectionString = try TestDatabase.create("listen_many")
        let seen = Mutex<[String: [String]]>([:])
        let listener = NotificationListener(
            connectionString: connectionString,
            handlers: [
                "chan_one": { payloads in
                    seen.withLock { $0["chan_one", default: []].append(contentsOf: payloads.isEmpty ? ["<again>"] : payloads) }
                },
                "chan_two": { payloads in
                    seen.withLock { $0["chan_two", default: []].append(contentsOf: payloads.isEmpty ? ["<again>"] : payloads) }
                },
            ]
        )
        listener.start()
        defer { listener.stop() }
        let connection = try Connection(connectionString: connectionString)
        try await eventually { seen.withLock { $0["chan_one"] == ["<again>"] && $0["chan_two"] == ["<again>"] } }
        // Exactly one backend listens, whatever the number of channels.
        let listening = try connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'"
        )
        XCTAssertEqual(try listening.first!.int(0), 1)
        try connection.execute("SELECT pg_notify('chan_one', 'a1'), pg_notify('chan_two', 'b1')")
        try connection.execute("SELECT pg_notify('chan_one', 'a2')")
        try connection.execute("SELECT pg_notify('chan_unknown', 'x')")
        try await eventually { seen.withLock { $0["chan_one"]?.count == 3 && $0["chan_two"]?.count == 2 } }
        XCTAssertEqual(seen.withLock { $0["chan_one"] }, ["<again>", "a1", "a2"])
        XCTAssertEqual(seen.withLock { $0["chan_two"] }, ["<again>", "b1"])
    }

    /// The append announcer's NOTIFY goes out after the request that appended has given up: its
    /// task does not take over the request's deadline (`ConnectionPool.deadline`), which here has
    /// passed while the pool's only connection is busy.
    func testAnAnnouncementOutlivesTheDeadlineOfTheRequestThatMadeIt() async throws {
        let connectionString = try TestDatabase.create("announce_deadline")
        let seen = Mutex(0)
        let listener = NotificationListener(
            connectionString: connectionString,
            handlers: [EventLog.channel: { payloads in seen.withLock { $0 += payloads.isEmpty ? 0 : 1 } }]
        )
        listener.start()
        defer { listener.stop() }
        try await Task.sleep(for: .milliseconds(300))  // listening
        let pool = ConnectionPool(connectionString: connectionString, maxConnections: 1, acquireTimeout: .seconds(30))
        let busy = Task { try await pool.withConnection { try $0.execute("SELECT pg_sleep(0.5)").count } }
        try await Task.sleep(for: .milliseconds(100))
        let announcer = AppendAnnouncer(pool: pool)
        ConnectionPool.$deadline.withValue(.now - .seconds(1)) { announcer.announce() }
        _ = try await busy.value
        try await eventually { seen.withLock { $0 } >= 1 }
        await pool.close()
    }

    /// With a confirmation, the listener checks its connection every `checkInterval` and records
    /// each check only after handling what arrived before it: a notification committed before a
    /// check began has reached its handler once that check is recorded. Stopping withdraws it.
    func testAConfirmedCheckFollowsEveryNotificationSentBeforeIt() async throws {
        let connectionString = try TestDatabase.create("listen_confirm")
        let seen = Mutex<[String]>([])
        let confirmation = ListenerConfirmation()
        let listener = NotificationListener(
            connectionString: connectionString,
            handlers: ["chan_confirm": { payloads in seen.withLock { $0 += payloads } }],
            confirmation: confirmation
        )
        XCTAssertNil(confirmation.confirmedAt, "nothing is confirmed before the first check")
        listener.start()
        try await eventually { confirmation.confirmedAt != nil }
        let connection = try Connection(connectionString: connectionString)
        for round in 0..<20 {
            try connection.execute("SELECT pg_notify('chan_confirm', $1)", ["n\(round)"])
            let sent = ContinuousClock.now
            // The first check that began after the commit, and what the handler had by then.
            try await eventually { (confirmation.confirmedAt.map { $0 > sent }) ?? false }
            XCTAssertTrue(seen.withLock { $0.contains("n\(round)") }, "round \(round): confirmed before its notification was handled")
        }
        // Checks keep coming while connected (every 200 ms).
        let before = confirmation.confirmedAt!
        try await eventually { confirmation.confirmedAt! > before + .milliseconds(100) }
        listener.stop()
        try await eventually { confirmation.confirmedAt == nil }
    }
}
