import ArgumentParser
import Benchmarks
import EventLog
import Foundation
import Logging
import PersonalData
import Postgres
import Projections

/// `sniffmeet bench rebuild`: rebuilds every read model from a generated log through the
/// projectors (`RebuildJob`, as `sniffmeet rebuild --all` does) and, in the same run and on the
/// same log, through PostgreSQL alone (`SQLRebuild`: one INSERT … SELECT per table), and prints
/// both rates and their ratio. It also checks that both built the same rows.
struct BenchRebuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Read-model rebuild rate vs an in-SQL rebuild of the same tables."
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "events in the generated log") var events = 1_000_000
    @Option(help: "users in the generated workload") var users = 20_000
    @Option(help: "events per rebuild batch") var batchSize = 5000
    @Flag(help: "reuse the log of an earlier run when it has the requested size") var reuse = false
    @Flag(help: "seal personal fields as the server does (the projectors then open every sealed event)") var sealed = false

    func run() async throws {
        let logger = Logger(label: "sniffmeet.bench")
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        let printer = ProgressPrinter()
        // The in-SQL reference reads personal fields from the log's JSON, so it always runs on
        // a log in the clear; with --sealed the projectors run on a sealed copy of the same workload.
        let clear = try await prepareLog(opened, name: "sniffmeet_bench_rebuild", sealer: nil, printer: printer)
        let sealer = try opened.sealer()
        let connectionString =
            sealed ? try await prepareLog(opened, name: "sniffmeet_bench_rebuild_sealed", sealer: sealer, printer: printer) : clear
        let total = try await onThread("bench") {
            try Connection(connectionString: connectionString).execute("SELECT count(*) FROM events").first!.int(0)
        }

        // The projectors, as `sniffmeet rebuild --all --restart`.
        let job = RebuildJob(
            connectionString: connectionString,
            sealer: sealer,
            batchSize: batchSize,
            restart: true,
            logger: logger
        )
        let projectorStart = Date()
        _ = try await job.run(
            onThread: { false },
            progress: { progress in
                printer.show(progress.logLine, bar: progress.bar(), final: progress.phase == .done)
            }
        )
        let projectorSeconds = Date().timeIntervalSince(projectorStart)

        // PostgreSQL alone, same tables, same log, same run.
        let sqlStart = Date()
        try await onThread("bench") {
            try SQLRebuild.run(into: TableSet(suffix: "__sql"), on: Connection(connectionString: clear))
        }
        let sqlSeconds = Date().timeIntervalSince(sqlStart)

        // Two databases have different transaction ids: feed positions are left out then.
        let excluded = sealed ? ReadModelChecksum.feedColumns : []
        let same = try await onThread("bench") { () -> Bool in
            let projected = try ReadModelChecksum.compute(excluding: excluded, on: Connection(connectionString: connectionString))
            let connection = try Connection(connectionString: clear)
            let inSQL = try ReadModelChecksum.compute(tables: TableSet(suffix: "__sql"), excluding: excluded, on: connection)
            for table in Projectors.all.flatMap(\.tables) { try connection.execute("DROP TABLE \(TableSet(suffix: "__sql")(table))") }
            return projected == inSQL
        }

        let projectorRate = Double(total) / projectorSeconds
        let sqlRate = Double(total) / sqlSeconds
        print(
            "sniffmeet bench rebuild: \(total) events, all read models (\(Projectors.names.joined(separator: ", ")))"
                + (sealed ? "; projectors on the sealed log, in-SQL on the same log in the clear" : "")
        )
        print(pad("rebuild", 34) + pad("seconds", 10) + pad("events/s", 12))
        print(
            pad("projectors (sniffmeet rebuild)", 34) + pad(String(format: "%.2f", projectorSeconds), 10)
                + pad(String(Int(projectorRate)), 12)
        )
        print(pad("in-SQL (INSERT … SELECT)", 34) + pad(String(format: "%.2f", sqlSeconds), 10) + pad(String(Int(sqlRate)), 12))
        print("ratio projectors / in-SQL: \(String(format: "%.2f", projectorRate / sqlRate))x (goal ≥ 0.5x)")
        print("same rows in both: \(same ? "yes" : "NO")")
        if !same { throw ExitCode(1) }
    }

    /// The generated log in database `name` (reused with --reuse when big enough): its
    /// connection string as the owner.
    private func prepareLog(_ opened: OpenDatabase, name: String, sealer: EventSealer?, printer: ProgressPrinter) async throws -> String {
        let eventCount = events
        let userCount = users
        let reusable = try ConnectionString.replacingDatabase(in: opened.ownerConnectionString, with: name)
        let existing =
            reuse
            ? (try? await onThread("bench") {
                try Connection(connectionString: reusable).execute("SELECT count(*) FROM events").first!.int(0)
            }) : nil
        if let existing, existing >= eventCount { return reusable }
        let fresh = try await BenchAppendCommand.freshDatabase(opened, name: name)
        let started = Date()
        let loaded = try await onThread("bench") {
            var workload = SyntheticWorkload(seed: 2026, users: userCount, sealer: sealer)
            return try BulkLoader.load(&workload, events: eventCount, on: Connection(connectionString: fresh)) { n in
                printer.show("generated \(n) events", bar: "\rgenerating log: \(n)/\(eventCount) events\u{1B}[K")
            }
        }
        printer.finish()
        try await onThread("bench") { _ = try Connection(connectionString: fresh).execute("VACUUM ANALYZE events") }
        print(
            "generated \(sealer == nil ? "" : "sealed ")log: \(loaded) events in \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
        )
        return fresh
    }
}
