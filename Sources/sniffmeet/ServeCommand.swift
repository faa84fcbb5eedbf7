import ArgumentParser
import Foundation
import Gateway
import Hummingbird
import Logging

/// `sniffmeet serve`: migrate as the owner, then run the HTTP API (and, beside it under one
/// ServiceGroup, the background services) as the runtime login until SIGTERM/SIGINT, which stops
/// accepting, finishes in-flight requests and stops the rest cleanly.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Migrate the database and serve the HTTP API.")

    @OptionGroup var database: DatabaseOptions
    @Option(help: "address to bind") var host = "127.0.0.1"
    @Option(help: "port to bind") var port = 8080

    func run() async throws {
        var logger = Logger(label: "sniffmeet.serve")
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        let runtime = try opened.runtime()
        let applied = try await opened.migrate(logger: logger)
        logger.info("database ready", metadata: ["applied": "\(applied)"])
        try await opened.warnAboutRuntimeRights(logger: logger)
        // The embedded setup keeps its master key beside its data; a real database needs one configured.
        let secret = try opened.masterKey()
        let configuration = try GatewayConfiguration(host: host, port: port, databaseURL: runtime, secret: secret)
            .applyingEnvironment()
        let app = try buildApplication(configuration, logger: logger)
        // Up: from here a line per request, written in batches (warnings at once; what waits
        // at exit is written by the handler `startBuffering` registers).
        StandardErrorLog.shared.startBuffering()
        try await app.runService()
    }
}
