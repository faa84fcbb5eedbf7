import ArgumentParser
import Commands
import EventLog
import Foundation
import Logging
import Postgres

/// `sniffmeet upgrade …`: one-time upgrades of data written by earlier versions.
struct UpgradeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "One-time upgrades of data written by earlier versions.",
        subcommands: [Nicknames.self]
    )

    /// `sniffmeet upgrade nicknames`: reserves on their keyed streams the nicknames held only in
    /// legacy `nickname-<name>` streams (`NicknameUpgrade`). Safe to run again, and to run while
    /// `serve` runs; exit code 1 when some nickname is held by two users (listed).
    struct Nicknames: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reserve nicknames held only in legacy nickname streams on their keyed streams."
        )

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let logger = Logger(label: "sniffmeet.upgrade")
            let opened = try await database.open(logger: logger)
            defer { opened.close() }
            let pool = ConnectionPool(connectionString: opened.readerConnectionString, maxConnections: 2)
            let handler = CommandHandler(log: EventLog(pool: pool), sealer: try opened.sealer())
            let printer = ProgressPrinter()
            var reserved = 0
            let report = try await NicknameUpgrade(handler: handler).run { done, total, stream, outcome in
                if case .reserved = outcome { reserved += 1 }
                printer.show(
                    "upgrade nicknames: \(done) of \(total) legacy streams, \(reserved) reserved (last \(stream))",
                    bar: "\r\(done)/\(total) legacy nickname streams, \(reserved) reserved\u{1B}[K",
                    final: done == total
                )
            }
            await pool.close()
            for (stream, user) in report.conflicts {
                print(
                    "conflict: \(stream) is held by \(user.uuidString.lowercased()) in its legacy stream and by another user on its keyed stream"
                )
            }
            print(
                "upgrade nicknames: \(report.outcomes.count) legacy streams, \(report.reserved) reserved now, \(report.unchanged) unchanged, \(report.conflicts.count) conflicts"
            )
            if !report.conflicts.isEmpty { throw ExitCode(1) }
        }
    }
}
