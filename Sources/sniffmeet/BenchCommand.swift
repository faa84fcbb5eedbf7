import ArgumentParser

/// `sniffmeet bench …`: measurements that print the project's figure next to a reference
/// measured in the same run, and the ratio (absolute times on a shared machine drift).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks against same-run references.",
        subcommands: [
            BenchAppendCommand.self, BenchRebuildCommand.self, BenchLagCommand.self, BenchPushCommand.self, BenchPhotosCommand.self,
            BenchWalkLogsCommand.self, BenchChatLatencyCommand.self,
        ]
    )
}
