import ArgumentParser
import Logging

/// `sniffmeet serve`: for now prepares the database (the HTTP gateway lands with its issue).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Migrate the database and serve the HTTP API.")

    @OptionGroup var database: DatabaseOptions
    @Option var host = "127.0.0.1"
    @Option var port = 8080

    func run() async throws {
        let logger = Logger(label: "sniffmeet.serve")
        let opened = try database.open(logger: logger)
        defer { opened.close() }
        let applied = try opened.migrate(logger: logger)
        print("database ready (\(applied.isEmpty ? "schema current" : "applied \(applied.joined(separator: ", "))")); the HTTP gateway is not built yet")
    }
}
