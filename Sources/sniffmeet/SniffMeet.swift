import ArgumentParser

/// The operators' command line: serve, migrate, replay, rebuild, verify, bench.
@main
struct SniffMeetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sniffmeet",
        abstract: "SniffMeet backend: event-sourced walking-mate service on PostgreSQL.",
        subcommands: [ServeCommand.self, MigrateCommand.self, BenchCommand.self, RebuildCommand.self, VerifyCommand.self, ReplayCommand.self]
    )
}
