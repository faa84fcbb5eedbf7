import ArgumentParser
import Foundation
import Logging
import PersonalData
import Projections

/// `sniffmeet verify`: projects the whole log into scratch tables and compares them with the
/// live read models. Exit code 1 when anything differs.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Compare the live read models with a fresh projection of the log."
    )

    @OptionGroup var database: DatabaseOptions
    @Argument(help: "read models to verify (default: all)") var names: [String] = []
    @Option(help: "differing rows shown per table and side") var show = 20

    func run() async throws {
        let logger = Logger(label: "sniffmeet.verify")
        let projectors = try names.isEmpty ? Projectors.all : Projectors.named(names)
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        let printer = ProgressPrinter()
        let verifier = Verifier(
            connectionString: opened.readerConnectionString,
            sealer: try opened.sealer(),
            projectors: projectors,
            maxRowsShown: show
        )
        let started = Date()
        let reports = try await onThread("sniffmeet.verify") {
            try verifier.run { events in
                let rate = Double(events) / max(Date().timeIntervalSince(started), 0.001)
                printer.show(
                    "verify projected \(events) events (\(Int(rate)) events/s)",
                    bar: "\rprojected \(events) events (\(Int(rate)) ev/s)\u{1B}[K"
                )
            }
        }
        printer.finish()
        var differing = 0
        for report in reports {
            let verdict = report.differingRows == 0 ? "ok" : "DIFFERS (\(report.differingRows) rows)"
            print("\(report.table): \(verdict); live \(report.liveRows) rows, expected \(report.expectedRows), at \(report.checkpoint)")
            for sample in report.samples { print("  \(sample.side.rawValue): \(sample.row)") }
            differing += report.differingRows
        }
        if differing > 0 { throw ExitCode(1) }
    }
}
