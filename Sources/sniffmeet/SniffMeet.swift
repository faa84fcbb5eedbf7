import ArgumentParser
import Gateway
import Logging

/// The operators' command line: serve, migrate, replay, rebuild, verify, bench, upgrade.
@main
struct SniffMeetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sniffmeet",
        abstract: "SniffMeet backend: event-sourced walking-mate service on PostgreSQL.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, BenchCommand.self, RebuildCommand.self, VerifyCommand.self, ReplayCommand.self,
            UpgradeCommand.self, OperatorsCommand.self,
        ]
    )

    /// Logs go to standard error as logfmt lines, then the chosen command runs.
    static func main() async {
        LoggingSystem.bootstrap { LogfmtLogHandler(label: $0) }
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
