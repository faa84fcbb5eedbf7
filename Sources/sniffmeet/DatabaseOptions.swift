import ArgumentParser
import EventLog
import Foundation
import Logging
import Postgres

/// Where the database is: `--database-url`/`DATABASE_URL` (any libpq connection string or URI),
/// else the embedded cluster in `--data-dir`, created and started on demand.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"),
            help: "libpq connection string or URI (default: $DATABASE_URL, else the embedded cluster)")
    var databaseURL: String?

    @Option(name: .customLong("data-dir"), help: "data folder of the embedded PostgreSQL cluster")
    var dataDirectory: String = ProcessInfo.processInfo.environment["SNIFFMEET_DATA_DIR"] ?? ".sniffmeet"

    /// The database of the embedded cluster.
    static let embeddedDatabase = "sniffmeet"

    /// Opens the database: returns its connection string and, for the embedded cluster, the
    /// server (to stop on exit when this process started it). Starting a cluster runs
    /// initdb/pg_ctl and connects: blocking work, done on a thread of its own.
    func open(logger: Logger) async throws -> OpenDatabase {
        let options = self
        return try await onThread("open-database") { try options.openBlocking(logger: logger) }
    }

    private func openBlocking(logger: Logger) throws -> OpenDatabase {
        if let url = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty {
            return OpenDatabase(connectionString: url, embedded: nil, startedHere: false)
        }
        let server = try EmbeddedPostgres(.init(dataDirectory: dataDirectory), logger: logger)
        let started = try server.start()
        try server.createDatabase(Self.embeddedDatabase)
        logger.info("using the embedded PostgreSQL", metadata: ["data": "\(server.options.dataDirectory)", "socket": "\(server.socketDirectory)"])
        return OpenDatabase(connectionString: server.connectionString(database: Self.embeddedDatabase), embedded: server, startedHere: started)
    }
}

/// An opened database; `close()` stops an embedded cluster this process started.
struct OpenDatabase: Sendable {
    var connectionString: String
    var embedded: EmbeddedPostgres?
    var startedHere: Bool

    /// Stops an embedded cluster this process started; called at exit, where blocking is fine.
    func close() {
        if startedHere { try? embedded?.stop() }
    }

    /// Applies pending migrations; returns the files applied.
    func migrate(logger: Logger) async throws -> [String] {
        let connectionString = connectionString
        return try await onThread("migrate") {
            try Migrator.bundled(logger: logger).migrate(connection: Connection(connectionString: connectionString))
        }
    }
}
