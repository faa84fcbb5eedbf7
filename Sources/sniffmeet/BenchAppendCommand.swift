import ArgumentParser
import Benchmarks
import EventLog
import Foundation
import Logging
import Postgres
import Synchronization
import UUIDText

/// `sniffmeet bench append`: commands appended per second through the event log, for several
/// writer counts and command sizes, next to two references writing the same rows as one plain
/// INSERT per command into a copy of the events table, in the same fresh database:
/// - pgbench itself (`-M prepared`, a custom script, as many clients as writers): what
///   PostgreSQL does for a client that costs nothing;
/// - our own wrapper and pool (one prepared statement per command, autocommit): what the log
///   adds on top of the wrapper.
/// The three alternate in short rounds and the medians are compared.
struct BenchAppendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "append",
        abstract: "Event log append throughput vs the same INSERT by pgbench and by our wrapper."
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "concurrent writers (and pgbench clients), comma separated") var writers = "1,4,16"
    @Option(help: "events per command, comma separated") var events = "1,10"
    @Option(help: "seconds per measurement (each side, all rounds together; rounds last whole seconds)") var seconds = 6.0
    @Option(help: "distinct streams written (random choice per command)") var streams = 10_000
    @Option(help: "alternating log/INSERT/pgbench measurements per row; the median of each is printed") var rounds = 3

    func run() async throws {
        let logger = Logger(label: "sniffmeet.bench")
        let pgbench = try PGBench.locate()
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        let connectionString = try await Self.freshDatabase(opened, name: "sniffmeet_bench")
        let writerCounts = writers.split(separator: ",").compactMap { Int($0) }
        let eventCounts = events.split(separator: ",").compactMap { Int($0) }
        let pool = ConnectionPool(connectionString: connectionString, maxConnections: (writerCounts.max() ?? 1) + 2)
        defer { Task { await pool.close() } }
        let log = EventLog(pool: pool)
        try await pool.withConnection { connection in
            _ = try connection.execute("CREATE TABLE plain_events (LIKE events INCLUDING ALL)")
        }
        let payloadText = #"{"message":"Walk at the park?","latitude":37.5665,"longitude":126.978}"#
        let metadataText = #"{"actor":"00000000-0000-0000-0000-000000000001","schema_version":1}"#
        let payload = Data(payloadText.utf8)
        let metadata = Data(metadataText.utf8)
        let streamCount = streams
        let roundCount = max(1, rounds)
        // pgbench runs whole seconds (-T); every side gets the same rounds.
        let roundSeconds = max(1, Int((seconds / Double(roundCount)).rounded()))

        print(
            "sniffmeet bench append: \(roundCount) alternating rounds of \(roundSeconds) s per side and row (median), "
                + "durable commits, \(streamCount) streams, \(URL(fileURLWithPath: pgbench.path).lastPathComponent) at \(pgbench.path)"
        )
        print("pgbench/s, wrapper/s: the same rows as one INSERT per command, by pgbench (-M prepared) and by our wrapper")
        print(
            pad("writers", 8) + pad("events/cmd", 11) + pad("log cmds/s", 12) + pad("pgbench/s", 11) + pad("wrapper/s", 11)
                + pad("log/pgbench", 12) + pad("log/wrapper", 12) + "log/pgbench per round"
        )
        for eventCount in eventCounts {
            for writerCount in writerCounts {
                let appendCommand: @Sendable () async throws -> Void = {
                    let stream = "bench-\(Int.random(in: 0..<streamCount))"
                    let batch = (0..<eventCount).map { _ in
                        NewEvent(stream: stream, type: "walk_requested", data: payload, metadata: metadata)
                    }
                    while true {
                        do {
                            _ = try await log.append(commandID: .random(), expectations: [stream: .any], events: batch)
                            return
                        } catch EventLogError.versionConflict { continue }
                    }
                }
                // The same rows as one plain INSERT statement per command. The copied table keeps
                // UNIQUE (stream_id, stream_version); a random version stands in for the counter.
                let values = (0..<eventCount).map { i in
                    "($\(4 * i + 1), (random() * 1e15)::bigint + 1, $\(4 * i + 2)::uuid, 'walk_requested', $\(4 * i + 3)::jsonb, $\(4 * i + 4)::jsonb)"
                }
                let insert =
                    "INSERT INTO plain_events (stream_id, stream_version, event_id, event_type, data, metadata) VALUES "
                    + values.joined(separator: ", ")
                let insertStatement: @Sendable () async throws -> Void = {
                    let stream = "bench-\(Int.random(in: 0..<streamCount))"
                    let parameters: [any PostgresEncodable] = (0..<eventCount).flatMap { _ -> [any PostgresEncodable] in
                        [stream, UUID.random(), JSONB(payload), JSONB(metadata)]
                    }
                    try await pool.withConnection { connection in
                        _ = try connection.execute(insert, parameters, prepared: true)
                    }
                }
                // pgbench's script: the same statement with the same values sent as parameters
                // (its variables), except the event id, which pgbench cannot make: the server does.
                let script = Self.pgbenchScript(events: eventCount, streams: streamCount)

                // Alternating rounds, median of each: the machine's drift hits every side alike.
                var logRates: [Double] = []
                var plainRates: [Double] = []
                var pgbenchRates: [Double] = []
                for _ in 0..<roundCount {
                    logRates.append(try await Throughput.measure(writers: writerCount, seconds: Double(roundSeconds), appendCommand))
                    pgbenchRates.append(
                        try await pgbench.run(
                            script: script,
                            variables: ["payload": payloadText, "metadata": metadataText],
                            clients: writerCount,
                            seconds: roundSeconds,
                            connectionString: connectionString
                        )
                    )
                    plainRates.append(try await Throughput.measure(writers: writerCount, seconds: Double(roundSeconds), insertStatement))
                }
                let logRate = Throughput.median(logRates)
                let plainRate = Throughput.median(plainRates)
                let pgbenchRate = Throughput.median(pgbenchRates)
                print(
                    pad("\(writerCount)", 8) + pad("\(eventCount)", 11) + pad(String(format: "%.0f", logRate), 12)
                        + pad(String(format: "%.0f", pgbenchRate), 11) + pad(String(format: "%.0f", plainRate), 11)
                        + pad(String(format: "%.2fx", logRate / pgbenchRate), 12) + pad(String(format: "%.2fx", logRate / plainRate), 12)
                        + Self.spread(zip(logRates, pgbenchRates).map { $0 / max($1, 1) })
                )
            }
        }
    }

    /// The lowest and highest of per-round ratios: how far one round can be from the median.
    static func spread(_ ratios: [Double]) -> String {
        guard let low = ratios.min(), let high = ratios.max() else { return "-" }
        return String(format: "%.2f-%.2fx", low, high)
    }

    /// A pgbench script inserting `events` rows of one random stream in one statement, as the
    /// wrapper's INSERT does. With `-M prepared` every `:variable` is a parameter sent with each
    /// execution; `payload` and `metadata` are defined with `-D`.
    static func pgbenchScript(events: Int, streams: Int) -> String {
        let row =
            "('bench-' || :stream, (random() * 1e15)::bigint + 1, gen_random_uuid(), 'walk_requested', "
            + "CAST(:payload AS jsonb), CAST(:metadata AS jsonb))"
        return "\\set stream random(0, \(max(0, streams - 1)))\n"
            + "INSERT INTO plain_events (stream_id, stream_version, event_id, event_type, data, metadata) VALUES "
            + Array(repeating: row, count: events).joined(separator: ", ") + ";\n"
    }

    /// Drops and recreates a benchmark database on the same server, migrated; as the owner
    /// (which needs CREATEDB), who then also runs the benchmark.
    static func freshDatabase(_ opened: OpenDatabase, name: String) async throws -> String {
        let server = opened.ownerConnectionString
        return try await onThread("fresh-database") { try BenchDatabase.recreate(name, server: server) }
    }
}
