import ArgumentParser
@preconcurrency import Crypto
import EventLog
import Foundation
import Logging
import PersonalData
import Postgres

/// Where the database is, and as whom: `--database-url`/`DATABASE_URL` is the runtime login
/// (what `serve` works as) and `--migration-database-url`/`MIGRATION_DATABASE_URL` the owner
/// (migrations, rebuilds, imports, benchmarks); both any libpq connection string or URI.
/// Without either, the embedded cluster in `--data-dir`, created and started on demand, with
/// both logins of its own.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help: "runtime login: libpq connection string or URI (default: $DATABASE_URL, else the embedded cluster)"
    )
    var databaseURL: String?

    @Option(
        name: .customLong("migration-database-url"),
        help: "owner login for migrations, rebuild and import (default: $MIGRATION_DATABASE_URL, else the runtime login)"
    )
    var migrationDatabaseURL: String?

    @Option(name: .customLong("data-dir"), help: "data folder of the embedded PostgreSQL cluster")
    var dataDirectory: String = ProcessInfo.processInfo.environment["SNIFFMEET_DATA_DIR"] ?? ".sniffmeet"

    /// The database of the embedded cluster.
    static let embeddedDatabase = "sniffmeet"

    /// Opens the database: returns both logins' connection strings and, for the embedded
    /// cluster, the server (to stop on exit when this process started it). Starting a cluster
    /// runs initdb/pg_ctl and connects: blocking work, done on a thread of its own.
    func open(logger: Logger) async throws -> OpenDatabase {
        let options = self
        return try await onThread("open-database") { try options.openBlocking(logger: logger) }
    }

    private func openBlocking(logger: Logger) throws -> OpenDatabase {
        let environment = ProcessInfo.processInfo.environment
        let runtime = (databaseURL ?? environment["DATABASE_URL"]).flatMap { $0.isEmpty ? nil : $0 }
        let owner = (migrationDatabaseURL ?? environment["MIGRATION_DATABASE_URL"]).flatMap { $0.isEmpty ? nil : $0 }
        if let login = owner ?? runtime {
            return OpenDatabase(
                ownerConnectionString: login,
                runtimeConnectionString: runtime,
                sharedLogin: owner == nil,
                embedded: nil,
                startedHere: false
            )
        }
        let server = try EmbeddedPostgres(.init(dataDirectory: dataDirectory), logger: logger)
        let started = try server.start()
        try server.createRoles()
        try server.createDatabase(Self.embeddedDatabase, owner: EmbeddedPostgres.ownerLogin)
        // Data folders of earlier versions: their database and tables belong to the superuser,
        // which then goes on migrating (see `schemaOwner`); the runtime login is new in any case.
        let ownerLogin = try server.schemaOwner(database: Self.embeddedDatabase)
        logger.info(
            "using the embedded PostgreSQL",
            metadata: [
                "data": "\(server.options.dataDirectory)", "socket": "\(server.socketDirectory)",
                "owner": "\(ownerLogin)", "runtime": "\(EmbeddedPostgres.runtimeLogin)",
            ]
        )
        return OpenDatabase(
            ownerConnectionString: server.connectionString(database: Self.embeddedDatabase, user: ownerLogin),
            runtimeConnectionString: server.connectionString(database: Self.embeddedDatabase, user: EmbeddedPostgres.runtimeLogin),
            sharedLogin: false,
            embedded: server,
            startedHere: started
        )
    }
}

/// A database selection that cannot serve.
enum DatabaseSelectionError: Error, CustomStringConvertible {
    /// Only the owner's login was given.
    case noRuntimeLogin

    var description: String {
        switch self {
        case .noRuntimeLogin:
            return
                "MIGRATION_DATABASE_URL names the owner, but the server also needs its runtime login: set DATABASE_URL (or --database-url) to a member of sniffmeet_runtime"
        }
    }
}

/// An opened database; `close()` stops an embedded cluster this process started.
struct OpenDatabase: Sendable {
    /// The owner: migrations, rebuild, import, benchmarks.
    var ownerConnectionString: String
    /// The runtime login; nil when only `MIGRATION_DATABASE_URL` was given.
    var runtimeConnectionString: String?
    /// Only `DATABASE_URL` was given: one login migrates and serves, so the server keeps the
    /// owner's rights over the log.
    var sharedLogin: Bool
    var embedded: EmbeddedPostgres?
    var startedHere: Bool

    /// The runtime login, which `serve` needs.
    func runtime() throws(DatabaseSelectionError) -> String {
        guard let runtimeConnectionString else { throw .noRuntimeLogin }
        return runtimeConnectionString
    }

    /// The server's master key: the environment's, else (embedded only) the one kept beside
    /// the cluster's data, made on first use.
    func masterKey() throws -> SymmetricKey {
        try ServerSecret.load(defaultFile: embedded.map { $0.options.dataDirectory + "/sniffmeet-master.key" })
    }

    /// What opens (and seals) personal data in the log, under `masterKey()`.
    func sealer() throws -> EventSealer { EventSealer(secret: try masterKey()) }

    /// For reading only (verify, export, fold): the runtime login when there is one.
    var readerConnectionString: String { runtimeConnectionString ?? ownerConnectionString }

    /// Stops an embedded cluster this process started; called at exit, where blocking is fine.
    func close() {
        if startedHere { try? embedded?.stop() }
    }

    /// Applies pending migrations as the owner; returns the files applied.
    func migrate(logger: Logger) async throws -> [String] {
        let connectionString = ownerConnectionString
        return try await onThread("migrate") {
            try Migrator.bundled(logger: logger).migrate(connection: Connection(connectionString: connectionString))
        }
    }

    /// Warns when the runtime login could rewrite or empty the log: it is the owner (only
    /// `DATABASE_URL` given), a superuser, or holds more than SELECT and INSERT on `events`.
    func warnAboutRuntimeRights(logger: Logger) async throws {
        guard let runtime = runtimeConnectionString else { return }
        if sharedLogin {
            logger.warning(
                "MIGRATION_DATABASE_URL is not set: the DATABASE_URL login migrates and serves, so the server keeps the owner's rights over the event log; set MIGRATION_DATABASE_URL to the owner and DATABASE_URL to a member of sniffmeet_runtime (README: Least privilege)"
            )
            return
        }
        let excessive = try await onThread("check-rights") {
            try Connection(connectionString: runtime).execute(
                """
                SELECT r.rolsuper OR pg_has_role(c.relowner, 'MEMBER')
                       OR has_table_privilege(c.oid, 'UPDATE, DELETE, TRUNCATE, TRIGGER')
                FROM pg_roles r, pg_class c WHERE r.rolname = current_user AND c.oid = 'events'::regclass
                """
            ).first?.bool(0) ?? false
        }
        if excessive {
            logger.warning(
                "the runtime login (DATABASE_URL) can change or empty the event log: it is a superuser, the owner or granted more than SELECT and INSERT on events; serve with a member of sniffmeet_runtime (README: Least privilege)"
            )
        }
    }
}
