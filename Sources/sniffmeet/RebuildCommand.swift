import ArgumentParser
import Foundation
import Logging
import PersonalData
import Projections

/// `sniffmeet rebuild [NAME…|--all]`: rebuilds read models into fresh tables while the live
/// ones serve, then swaps them in. Ctrl-C stops between batches; running it again resumes.
struct RebuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Rebuild read models from the log without taking them offline."
    )

    @OptionGroup var database: DatabaseOptions
    @Argument(help: "read models to rebuild (\(Projectors.names.joined(separator: ", ")))") var names: [String] = []
    @Flag(help: "rebuild every read model") var all = false
    @Flag(help: "discard the fresh tables of an interrupted run and start from the beginning") var restart = false
    @Option(help: "events per batch") var batchSize = 5000

    func validate() throws {
        if all == !names.isEmpty { throw ValidationError("name the read models to rebuild, or pass --all") }
        if batchSize < 1 { throw ValidationError("--batch-size must be positive") }
    }

    func run() async throws {
        let logger = Logger(label: "sniffmeet.rebuild")
        let projectors = try all ? Projectors.all : Projectors.named(names)
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        let interrupt = InterruptFlag()
        let printer = ProgressPrinter()
        let job = RebuildJob(
            connectionString: opened.ownerConnectionString,
            sealer: try opened.sealer(),
            projectors: projectors,
            batchSize: batchSize,
            restart: restart,
            logger: logger
        )
        let outcome = try await job.run(
            onThread: { interrupt.isRaised },
            progress: { progress in
                printer.show(progress.logLine, bar: progress.bar(), final: progress.phase == .done || progress.phase == .cancelled)
            }
        )
        switch outcome {
        case .swapped(let at, let events):
            print("rebuilt \(projectors.map(\.name).joined(separator: ", ")): \(events) events this run, swapped in at \(at)")
        case .cancelled(let at, let events):
            print("stopped at \(at) after \(events) events; the live tables still serve. Run the same command again to resume.")
            throw ExitCode(130)
        }
    }
}
