import ArgumentParser
import Benchmarks
import EventLog
import Foundation
import Logging
import Postgres
import Synchronization

/// `sniffmeet bench append`: commands appended per second through the event log, for several
/// writer counts and command sizes, next to plain INSERTs of the same rows through the same
/// wrapper and pool (one prepared statement per command, autocommit).
struct BenchAppendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "append", abstract: "Event log append throughput vs plain INSERT.")

    @OptionGroup var database: DatabaseOptions
    @Option(help: "concurrent writers, comma separated") var writers = "1,4,16"
    @Option(help: "events per command, comma separated") var events = "1,10"
    @Option(help: "seconds per measurement (each side, all rounds together)") var seconds = 6.0
    @Option(help: "distinct streams written (random choice per command)") var streams = 10_000
    @Option(help: "alternating log/INSERT measurements per row; the median of each is printed") var rounds = 3

    func run() async throws {
        let logger = Logger(label: "sniffmeet.bench")
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
        let payload = Data(#"{"message":"Walk at the park?","latitude":37.5665,"longitude":126.978}"#.utf8)
        let metadata = Data(#"{"actor":"00000000-0000-0000-0000-000000000001","schema_version":1}"#.utf8)
        let streamCount = streams

        print("sniffmeet bench append: \(seconds)s per side and row in \(rounds) alternating rounds (median), durable commits, \(streamCount) streams")
        print(pad("writers", 8) + pad("events/cmd", 11) + pad("log cmds/s", 13) + pad("INSERT stmts/s", 16) + "ratio")
        for eventCount in eventCounts {
            for writerCount in writerCounts {
                let appendCommand: @Sendable () async throws -> Void = {
                    let stream = "bench-\(Int.random(in: 0..<streamCount))"
                    let batch = (0..<eventCount).map { _ in NewEvent(stream: stream, type: "walk_requested", data: payload, metadata: metadata) }
                    while true {
                        do {
                            _ = try await log.append(commandID: UUID(), expectations: [stream: .any], events: batch)
                            return
                        } catch EventLogError.versionConflict { continue }
                    }
                }
                // The same rows as one plain INSERT statement per command. The copied table keeps
                // UNIQUE (stream_id, stream_version); a random version stands in for the counter.
                let values = (0..<eventCount).map { i in
                    "($\(4 * i + 1), (random() * 1e15)::bigint + 1, $\(4 * i + 2)::uuid, 'walk_requested', $\(4 * i + 3)::jsonb, $\(4 * i + 4)::jsonb)"
                }
                let insert = "INSERT INTO plain_events (stream_id, stream_version, event_id, event_type, data, metadata) VALUES "
                    + values.joined(separator: ", ")
                let insertStatement: @Sendable () async throws -> Void = {
                    let stream = "bench-\(Int.random(in: 0..<streamCount))"
                    let parameters: [any PostgresEncodable] = (0..<eventCount).flatMap { _ -> [any PostgresEncodable] in
                        [stream, UUID(), JSONB(payload), JSONB(metadata)]
                    }
                    try await pool.withConnection { connection in
                        _ = try connection.execute(insert, parameters, prepared: true)
                    }
                }
                // Alternating rounds, median of each: the machine's drift hits both sides alike.
                var logRates: [Double] = [], plainRates: [Double] = []
                for _ in 0..<max(1, rounds) {
                    logRates.append(try await Throughput.measure(writers: writerCount, seconds: seconds / Double(max(1, rounds)), appendCommand))
                    plainRates.append(try await Throughput.measure(writers: writerCount, seconds: seconds / Double(max(1, rounds)), insertStatement))
                }
                let logRate = Throughput.median(logRates), plainRate = Throughput.median(plainRates)
                print(pad("\(writerCount)", 8) + pad("\(eventCount)", 11) + pad(String(format: "%.0f", logRate), 13)
                      + pad(String(format: "%.0f", plainRate), 16) + String(format: "%.2fx", logRate / plainRate))
            }
        }
    }

    /// Drops and recreates a benchmark database on the same server, migrated.
    static func freshDatabase(_ opened: OpenDatabase, name: String) async throws -> String {
        let server = opened.connectionString
        return try await onThread("fresh-database") { try BenchDatabase.recreate(name, server: server) }
    }
}
