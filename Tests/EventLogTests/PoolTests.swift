import EventLog
import Foundation
import PostgresTesting
import Synchronization
import XCTest

@testable import Postgres

final class PoolTests: XCTestCase {
    /// A server restart breaks every pooled connection; the pool must drop them, fail clearly
    /// while the server is down, and work again once it is back.
    func testPoolSurvivesAServerRestart() async throws {
        // A cluster of its own: restarting the shared one would disturb other suites.
        let directory = "/tmp/sniffmeet-restart-\(getpid())"
        let server = try EmbeddedPostgres(.init(dataDirectory: directory, durable: false))
        try server.start()
        defer {
            try? server.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let pool = ConnectionPool(connectionString: server.connectionString(), maxConnections: 4, acquireTimeout: .seconds(2))
        // Fill the pool with idle connections.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await pool.withConnection { connection in _ = try connection.execute("SELECT pg_sleep(0.05)") }
                }
            }
            try await group.waitForAll()
        }
        let before = pool.statistics
        XCTAssertEqual(before.open, 4)

        try server.stop()
        let started = ContinuousClock.now
        do {
            _ = try await pool.withConnection { try $0.execute("SELECT 1").first!.int(0) }
            XCTFail("the server is down: the query must fail")
        } catch let error as PostgresError {
            XCTAssertTrue(error.isConnectionProblem, "a clear connection error, got \(error)")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10), "fails, does not hang")

        try server.start()
        for _ in 0..<8 {
            let value = try await pool.withConnection { try $0.execute("SELECT 42").first!.int(0) }
            XCTAssertEqual(value, 42)
        }
        await pool.close()
    }

    func testAcquireTimesOutWhenThePoolIsExhausted() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("pool"), maxConnections: 1, acquireTimeout: .milliseconds(200))
        let holder = try await holdingTheOnlyConnection(of: pool, seconds: 1, Counts())
        do {
            _ = try await pool.withConnection { try $0.execute("SELECT 1").count }
            XCTFail("the only connection is busy: acquire must time out")
        } catch PostgresError.poolTimeout {
        }
        _ = try await holder.value
        let after = try await pool.withConnection { try $0.execute("SELECT 1").count }
        XCTAssertEqual(after, 1)
        await pool.close()
    }

    func testParametersRoundTrip() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("params"))
        let id = UUID()
        let date = Date(timeIntervalSince1970: 1_800_000_000.123456)
        let row = try await pool.withConnection { connection -> [String] in
            let result = try connection.execute(
                "SELECT $1::text, $2::bigint, $3::bool, $4::uuid, $5::timestamptz, $6::jsonb, $7::text[], $8::text IS NULL",
                [
                    "it's \"quoted\" \\ ; DROP TABLE events", Int64.max, true, id, date, JSONB(#"{"a": [1, 2]}"#),
                    ["x", "y\"z", "a,b"], Optional<String>.none,
                ]
            )
            let row = result.first!
            return [
                try row.string(0), String(try row.int64(1)), String(try row.bool(2)), try row.uuid(3).uuidString,
                String(try row.date(4).timeIntervalSince1970), String(decoding: try row.json(5), as: UTF8.self),
                try row.string(6), String(try row.bool(7)),
            ]
        }
        XCTAssertEqual(row[0], "it's \"quoted\" \\ ; DROP TABLE events")
        XCTAssertEqual(row[1], String(Int64.max))
        XCTAssertEqual(row[2], "true")
        XCTAssertEqual(row[3], id.uuidString)
        XCTAssertEqual(Double(row[4])!, date.timeIntervalSince1970, accuracy: 0.000001)
        XCTAssertEqual(row[5], #"{"a": [1, 2]}"#)
        XCTAssertEqual(row[6], #"{x,"y\"z","a,b"}"#)
        XCTAssertEqual(row[7], "true")
        // A cell that is not a uuid is a decoding error, not a crash or a wrong id.
        let notUUID = try await pool.withConnection { connection -> [Bool] in
            let row = try connection.execute(
                "SELECT 'not-a-uuid', '0e9b3a6c-7f41-4e0a-9d2b-5c1f8a3e6b7g', 'F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6'"
            ).first!
            return [
                (try? row.uuid(0)) == nil, (try? row.uuid(1)) == nil,
                (try? row.uuid(2)) == UUID(uuidString: "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"),
            ]
        }
        XCTAssertEqual(notUUID, [true, true, true])
        await pool.close()
    }

    /// Work waiting for a connection gives up at its task's deadline (a request's, set by the
    /// gateway) long before the pool's own acquire timeout; work without one waits its turn.
    func testWaitingWorkGivesUpAtItsTasksDeadline() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("deadline"), maxConnections: 1, acquireTimeout: .seconds(30))
        // The only connection is busy for a second and a half.
        let counts = Counts()
        let busy = try await holdingTheOnlyConnection(of: pool, seconds: 1.5, counts)
        let patient = Task { try await pool.withConnection { try $0.execute("SELECT 7").first!.int(0) } }
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(200)
        do {
            _ = try await ConnectionPool.$deadline.withValue(deadline) {
                try await pool.withConnection { try $0.execute("SELECT 1").count }
            }
            XCTFail("the deadline passed while it waited")
        } catch PostgresError.poolTimeout(let waited) {
            // Not before the deadline. (`waited` counts from when the work joined the queue, a
            // little after the deadline was set, so it may fall short of 200 ms by that much.)
            XCTAssertGreaterThanOrEqual(ContinuousClock.now, deadline)
            XCTAssertGreaterThan(waited, .milliseconds(150))
        }
        XCTAssertFalse(counts.holderDone.load(ordering: .relaxed), "given up at the deadline, not when the connection came free")
        // A query (`run`) gives up the same way.
        do {
            _ = try await ConnectionPool.$deadline.withValue(.now + .milliseconds(100)) {
                try await pool.run(Query("SELECT 1") { $0.count })
            }
            XCTFail("the deadline passed while it waited")
        } catch PostgresError.poolTimeout {}
        let sleptRows = try await busy.value
        let patientValue = try await patient.value
        XCTAssertEqual(sleptRows, 1)
        XCTAssertEqual(patientValue, 7)
        await pool.close()
    }

    /// A parameter with a NUL byte (a C string would end there) is refused, naming its place,
    /// before any statement is sent: nothing of the pipeline runs.
    func testAParameterWithANULByteIsRefusedBeforeAnythingIsSent() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("nul"))
        let count = try await pool.withConnection { connection -> Int in
            try connection.execute("CREATE TABLE t (label text)")
            for text in ["a\u{0}b", "\u{0}", String(repeating: "x", count: 5000) + "\u{0}"] {
                do {
                    _ = try connection.pipeline([
                        Connection.Statement("INSERT INTO t VALUES ($1)", ["fine, and sent first"]),
                        Connection.Statement("INSERT INTO t VALUES ($1)", [JSONB("{}"), text]),
                    ])
                    XCTFail("a NUL byte must be refused")
                } catch PostgresError.invalidParameter(let index, _) {
                    XCTAssertEqual(index, 2)
                }
            }
            XCTAssertThrowsError(try connection.execute("SELECT $1::text", ["é\u{0}"]))
            // Empty and non-ASCII texts pass.
            _ = try connection.pipeline([Connection.Statement("INSERT INTO t VALUES ($1), ($2)", ["", "산책 🐕"])])
            return try connection.execute("SELECT count(*) FROM t").first!.int(0)
        }
        XCTAssertEqual(count, 2, "only the last pipeline's two rows")
        await pool.close()
    }

    /// Array parameters of a prepared statement travel in binary when the statement declares
    /// their element type, and in text otherwise; PostgreSQL reads the same values either way.
    func testArrayParametersReadTheSameInBinaryAndInText() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("binary-arrays"))
        try await pool.withConnection { connection in
            let date = Date(timeIntervalSince1970: 1_800_000_000.123456)
            let cases: [(String, any PostgresEncodable)] = [
                ("bigint[]", [Int.min, -1, 0, 42, Int.max]),
                ("bigint[]", [Int64(7), Int64(-7)]),
                ("int[]", [Int32.min, 0, Int32.max]),
                ("int[]", [1, 2, 3]),  // Int into int4[]: not its binary type, so text
                ("bool[]", [true, false]),
                ("text[]", ["", "plain", "quote \" and backslash \\", "{braces}, commas", "NULL", "산책 🐕"]),
                ("text[]", [String?.none, "x", nil]),
                ("text[]", [UUID(), UUID()]),  // UUIDs into text[]: text
                ("uuid[]", [UUID(), UUID()]),
                ("jsonb[]", [JSONB(#"{"a": [1, "é"], "b": null}"#), JSONB("[]"), JSONB(#""\u0041""#)]),
                ("bytea[]", [Data(), Data([0, 1, 2, 255]), Data(repeating: 7, count: 300)]),
                ("timestamptz[]", [date, Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -86_400.5)]),
                ("timestamptz[]", [Date?.none, date]),
                ("double precision[]", [0.1, -2.5e300, 3]),
                ("bigint[]", [Int]()),
                ("uuid[]", PostgresArray([UUID(), Optional<UUID>.none])),
            ]
            for (type, value) in cases {
                let sql = "SELECT ($1::\(type))::text"
                let binary = try connection.execute(sql, [value], prepared: true).first!.string(0)
                let text = try connection.execute(sql, [value], prepared: false).first!.string(0)
                XCTAssertEqual(binary, text, "\(type): \(value)")
            }
            // PostgreSQL's own types for the parameters, learnt when preparing.
            XCTAssertEqual(connection.preparedStatements["SELECT ($1::bigint[])::text"]?.arrayElementTypes, [20])
            XCTAssertEqual(connection.preparedStatements["SELECT ($1::jsonb[])::text"]?.arrayElementTypes, [3802])
            XCTAssertEqual(connection.preparedStatements["SELECT ($1::double precision[])::text"]?.arrayElementTypes, [701])
            // Which went binary: an array of the declared element type, and only that.
            let declared = Connection.Prepared(name: "probe", arrayElementTypes: [20, 25, 2950, nil])
            let encoded = try Connection.encode([[1, 2], [UUID()], [UUID()], ["a"]], for: declared)
            let binary = encoded.map { if case .binary = $0 { true } else { false } }
            XCTAssertEqual(binary, [true, false, true, false])
            // A NUL byte inside a binary text element is refused before sending, as in text.
            for type in ["text[]", "jsonb[]"] {
                let value: any PostgresEncodable = type == "text[]" ? ["fine", "a\u{0}b"] : [JSONB("1"), JSONB("\"\u{0}\"")]
                XCTAssertThrowsError(try connection.execute("SELECT $1::\(type)", [value], prepared: true)) { error in
                    guard case PostgresError.invalidParameter(let index, _) = error else { return XCTFail("\(error)") }
                    XCTAssertEqual(index, 1)
                }
            }
            // And a binary array is what PostgreSQL stores: the log's insert takes them.
            try connection.execute("CREATE TABLE stored (ids uuid[], at timestamptz[], labels text[])")
            let ids = [UUID(), UUID()]
            try connection.execute(
                "INSERT INTO stored VALUES ($1::uuid[], $2::timestamptz[], $3::text[])",
                [ids, [date], ["a", "b"]],
                prepared: true
            )
            let row = try connection.execute("SELECT ids[2]::text, extract(epoch FROM at[1])::text, labels[2] FROM stored").first!
            XCTAssertEqual(try row.string(0), ids[1].uuidString.lowercased())
            XCTAssertEqual(try row.string(1), "1800000000.123456")
            XCTAssertEqual(try row.string(2), "b")
        }
        await pool.close()
    }

    func testPipelineAndCopy() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("copy"))
        let (sum, copied, lines) = try await pool.withConnection { connection -> (Int, Int, [String]) in
            try connection.execute("CREATE TABLE t (n int, label text)")
            let statements = (1...1000).map { Connection.Statement("INSERT INTO t VALUES ($1, $2)", [$0, "p\($0)"]) }
            _ = try connection.pipeline(statements)
            let copied = try connection.copyIn("COPY t FROM STDIN", [Data("2001\tc1\n2002\tc2\n".utf8)])
            var lines: [String] = []
            try connection.copyOut("COPY (SELECT n, label FROM t WHERE n > 2000 ORDER BY n) TO STDOUT") {
                lines.append(String(decoding: $0, as: UTF8.self))
            }
            let sum = try connection.execute("SELECT sum(n) FROM t WHERE n <= 1000").first!.int(0)
            return (sum, copied, lines)
        }
        XCTAssertEqual(sum, 500_500)
        XCTAssertEqual(copied, 2)
        XCTAssertEqual(lines, ["2001\tc1\n", "2002\tc2\n"])
        // A failing statement in a pipeline is reported, and the connection stays usable.
        do {
            _ = try await pool.withConnection { connection in
                try connection.pipeline([Connection.Statement("SELECT 1"), Connection.Statement("SELECT 1/0")]).count
            }
            XCTFail("division by zero must surface")
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, "22012")
        }
        let value = try await pool.withConnection { try $0.execute("SELECT 7").first!.int(0) }
        XCTAssertEqual(value, 7)
        await pool.close()
    }

    /// Work beyond the connections waits in one queue and is served by the connections' own
    /// threads: all of it runs, never more than `maxConnections` at once, on at most that many
    /// sessions.
    func testQueuedWorkRunsOnAtMostMaxConnections() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("queue"), maxConnections: 3)
        let counts = Counts()
        let sessions = try await withThrowingTaskGroup(of: Int32.self) { group in
            for _ in 0..<60 {
                group.addTask {
                    try await pool.withConnection { connection in
                        let now = counts.running.wrappingAdd(1, ordering: .relaxed).newValue
                        counts.mostAtOnce.max(now, ordering: .relaxed)
                        defer { counts.running.wrappingSubtract(1, ordering: .relaxed) }
                        return Int32(try connection.execute("SELECT pg_backend_pid(), pg_sleep(0.005)").first!.int(0))
                    }
                }
            }
            return try await group.reduce(into: Set<Int32>()) { $0.insert($1) }
        }
        XCTAssertLessThanOrEqual(counts.mostAtOnce.load(ordering: .relaxed), 3)
        XCTAssertGreaterThanOrEqual(counts.mostAtOnce.load(ordering: .relaxed), 2, "queued work must use the free connections")
        XCTAssertLessThanOrEqual(sessions.count, 3)
        XCTAssertEqual(pool.statistics.open, sessions.count)
        XCTAssertEqual(pool.statistics.waiting, 0)
        await pool.close()
    }

    /// Waiting work whose task is cancelled fails at once with `CancellationError` and never runs;
    /// closing the pool fails the rest of the queue with `poolClosed`.
    func testCancelledAndClosedWaitsNeverRun() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("cancel"), maxConnections: 1, acquireTimeout: .seconds(30))
        let counts = Counts()
        let holder = try await holdingTheOnlyConnection(of: pool, seconds: 1.5, counts)
        let cancelled = Task { try await pool.withConnection { _ in counts.ran.wrappingAdd(1, ordering: .relaxed) } }
        let closed = Task { try await pool.withConnection { _ in counts.ran.wrappingAdd(1, ordering: .relaxed) } }
        try await eventually { pool.statistics.waiting == 2 }
        cancelled.cancel()
        do {
            try await cancelled.value
            XCTFail("cancelled waiting work must not run")
        } catch is CancellationError {
        }
        XCTAssertFalse(counts.holderDone.load(ordering: .relaxed), "a cancelled wait ends before the connection frees up")
        await pool.close()
        do {
            try await closed.value
            XCTFail("closing the pool must fail the waiting work")
        } catch PostgresError.poolClosed {
        }
        _ = try await holder.value
        XCTAssertEqual(counts.ran.load(ordering: .relaxed), 0)
    }

    /// Queries that wait for a busy connection go to the server in one pipeline: those before a
    /// failing one share its implicit transaction (one `transaction_timestamp()`), the failing
    /// one gets its own error, those it aborted run again alone and still get their own answers,
    /// and a cancelled one never runs.
    func testWaitingQueriesSharePipelineAndKeepTheirOwnAnswers() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("pipelined"), maxConnections: 1, acquireTimeout: .seconds(30))
        let holder = try await holdingTheOnlyConnection(of: pool, seconds: 0.5, Counts())
        let failing = 6
        let query: @Sendable (Int) -> Query<(Int, String)> = { index in
            // 1 / 0 fails with division_by_zero (22012) on the server, after the batch was sent.
            Query("SELECT $1::int, 1 / $2::int, transaction_timestamp()::text", [index, index == failing ? 0 : 1]) { result in
                (try result.first!.int(0), try result.first!.string(2))
            }
        }
        var tasks: [Task<(Int, String), any Error>] = []
        for index in 0..<12 {
            tasks.append(Task { try await pool.run(query(index)) })
            // Queued in order, so the pipeline's order is known.
            while pool.statistics.waiting < index + 1 { try await Task.sleep(for: .milliseconds(2)) }
        }
        let cancelled = Task { try await pool.run(query(99)) }
        while pool.statistics.waiting < 13 { try await Task.sleep(for: .milliseconds(2)) }
        cancelled.cancel()
        _ = try await holder.value

        var stamps: [Int: String] = [:]
        for (index, task) in tasks.enumerated() {
            do {
                let (value, stamp) = try await task.value
                XCTAssertNotEqual(index, failing, "the failing query must fail")
                XCTAssertEqual(value, index, "each query gets its own answer")
                stamps[index] = stamp
            } catch let error as PostgresError {
                XCTAssertEqual(index, failing)
                XCTAssertEqual(error.sqlState, "22012", "the failing query gets the server's own error")
            }
        }
        do {
            _ = try await cancelled.value
            XCTFail("a cancelled query must not run")
        } catch is CancellationError {
        }
        XCTAssertEqual(Set((0..<failing).map { stamps[$0]! }).count, 1, "the queries before the failure shared one transaction: \(stamps)")
        XCTAssertEqual(Set(((failing + 1)..<12).map { stamps[$0]! }).count, 12 - failing - 1, "the aborted ones ran again, each alone")
        XCTAssertFalse(((failing + 1)..<12).contains { stamps[$0] == stamps[0] })
        // The connection is clean afterwards.
        let after = try await pool.run(Query("SELECT 7") { try $0.first!.int(0) })
        XCTAssertEqual(after, 7)
        await pool.close()
    }
    /// A connection out of work looks for more for a moment before it goes idle: work arriving
    /// meanwhile runs on it (no other connection opens, none is woken), and after the budget it
    /// is idle; a close while it looks drops it.
    func testAConnectionLooksForMoreWorkBeforeItGoesIdle() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("linger"), maxConnections: 4, lingerBudget: .seconds(1))
        let backend = { @Sendable in try await pool.withConnection { try $0.execute("SELECT pg_backend_pid()").first!.int(0) } }
        let first = try await backend()
        XCTAssertEqual(pool.statistics.idle, 0, "still looking for work, not yet idle")
        // Past the moments between its answer and its look (work then would open a connection).
        try await Task.sleep(for: .milliseconds(50))
        let second = try await backend()
        XCTAssertEqual(first, second, "work that came while it looked ran on it")
        XCTAssertEqual(pool.statistics.open, 1)
        try await Task.sleep(for: .milliseconds(1500))
        XCTAssertEqual(pool.statistics.idle, 1, "idle once the budget is spent")
        let third = try await backend()
        XCTAssertEqual(third, first)
        await pool.close()
        try await eventually { pool.statistics.open == 0 }  // closed while looking: dropped
    }
}

/// Counters shared by the work a test puts into the pool.
private final class Counts: Sendable {
    let running = Atomic<Int>(0)
    let mostAtOnce = Atomic<Int>(0)
    let ran = Atomic<Int>(0)
    /// Set by work holding the only connection when it gives it back.
    let holderDone = Atomic<Bool>(false)
}

/// Work holding `pool`'s only connection for `seconds` (`counts.running` once it holds it,
/// `counts.holderDone` once it gave it back; its value is `pg_sleep`'s one row), returned once it
/// holds the connection.
private func holdingTheOnlyConnection(of pool: ConnectionPool, seconds: Double, _ counts: Counts) async throws -> Task<Int, any Error> {
    let holder = Task {
        try await pool.withConnection { connection in
            counts.running.add(1, ordering: .relaxed)
            defer { counts.holderDone.store(true, ordering: .relaxed) }
            return try connection.execute("SELECT pg_sleep(\(seconds))").count
        }
    }
    try await eventually { counts.running.load(ordering: .relaxed) == 1 }
    return holder
}
