import ArgumentParser
import Logging

/// `sniffmeet migrate`: applies pending schema/ migrations.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Apply pending database migrations.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Logger(label: "sniffmeet.migrate")
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        let applied = try await opened.migrate(logger: logger)
        print(applied.isEmpty ? "schema is current; nothing to apply" : "applied: \(applied.joined(separator: ", "))")
    }
}
