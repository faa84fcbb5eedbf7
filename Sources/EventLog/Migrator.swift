import Crypto
import Foundation
import Logging
import Postgres

/// Applies the numbered SQL files of `schema/` in order, each in its own transaction, and
/// records each with a SHA-256 checksum. Refuses to run when an applied file changed or went
/// missing. A session advisory lock keeps two processes from applying the same file.
public struct Migrator: Sendable {
    /// One migration file.
    public struct Migration: Sendable, Hashable {
        public var version: Int
        public var name: String
        public var sql: String
        public init(version: Int, name: String, sql: String) {
            self.version = version
            self.name = name
            self.sql = sql
        }
        public var checksum: String { Hex.string(SHA256.hash(data: Data(sql.utf8))) }
    }

    public enum Failure: Error, CustomStringConvertible {
        case changedAfterApply(version: Int, name: String)
        case missingFile(version: Int, name: String)
        case badFileName(String)
        case schemaFolderNotFound

        public var description: String {
            switch self {
            case .changedAfterApply(let version, let name):
                return
                    "migration \(version) (\(name)) was changed after it was applied; applied migrations are never edited: add a new file instead"
            case .missingFile(let version, let name):
                return "migration \(version) (\(name)) is recorded as applied but its file is missing"
            case .badFileName(let name):
                return "schema file \(name) must be named NNNN_description.sql"
            case .schemaFolderNotFound:
                return "the schema/ folder was not found above the program or in the current directory; set SNIFFMEET_SCHEMA_DIR"
            }
        }
    }

    public let migrations: [Migration]
    private let logger: Logger

    public init(migrations: [Migration], logger: Logger = Logger(label: "sniffmeet.migrate")) {
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.logger = logger
    }

    /// The project's own migrations: `SNIFFMEET_SCHEMA_DIR`, else the nearest `schema/` folder
    /// above the program (the repository when built with SwiftPM, /app in the Docker image),
    /// else `./schema`.
    public static func bundled(logger: Logger = Logger(label: "sniffmeet.migrate")) throws -> Migrator {
        try Migrator(folder: schemaFolder(), logger: logger)
    }

    static func schemaFolder() throws -> URL {
        let fileManager = FileManager.default
        if let configured = ProcessInfo.processInfo.environment["SNIFFMEET_SCHEMA_DIR"] { return URL(fileURLWithPath: configured) }
        func isSchema(_ url: URL) -> Bool {
            ((try? fileManager.contentsOfDirectory(atPath: url.path)) ?? []).contains { $0.hasPrefix("0001_") && $0.hasSuffix(".sql") }
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent()
        if let executable = Bundle.main.executableURL { directory = executable.resolvingSymlinksInPath().deletingLastPathComponent() }
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("schema")
            if isSchema(candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        let local = URL(fileURLWithPath: fileManager.currentDirectoryPath).appendingPathComponent("schema")
        if isSchema(local) { return local }
        throw Failure.schemaFolderNotFound
    }

    /// Reads `NNNN_name.sql` files from a folder.
    public init(folder: URL, logger: Logger = Logger(label: "sniffmeet.migrate")) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }
        let migrations = try names.map { name -> Migration in
            guard let version = Int(name.prefix { $0.isNumber }), name.first!.isNumber else { throw Failure.badFileName(name) }
            let sql = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            return Migration(version: version, name: name, sql: sql)
        }
        self.init(migrations: migrations, logger: logger)
    }

    /// Applies what is pending; returns the names applied. Blocks; run it off the cooperative pool.
    @discardableResult
    public func migrate(connection: Connection) throws -> [String] {
        // Session lock: a second migrator waits here, then finds the files applied.
        try connection.execute("SELECT pg_advisory_lock(7336224418)")
        defer { _ = try? connection.execute("SELECT pg_advisory_unlock(7336224418)") }
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                checksum   text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now())
            """
        )
        let applied = try appliedVersions(connection)
        var done: [String] = []
        for migration in migrations {
            if let recorded = applied[migration.version] {
                guard recorded.checksum == migration.checksum else {
                    throw Failure.changedAfterApply(version: migration.version, name: migration.name)
                }
                continue
            }
            logger.info("applying migration", metadata: ["file": "\(migration.name)"])
            try connection.transaction { connection in
                try connection.executeScript(migration.sql)
                try connection.execute(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    [migration.version, migration.name, migration.checksum]
                )
            }
            done.append(migration.name)
        }
        for (version, recorded) in applied where !migrations.contains(where: { $0.version == version }) {
            throw Failure.missingFile(version: version, name: recorded.name)
        }
        return done
    }

    /// True when every migration is applied and unchanged (what `/readyz` asks).
    public func isCurrent(connection: Connection) throws -> Bool {
        let exists = try connection.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").first!.bool(0)
        guard exists else { return false }
        let applied = try appliedVersions(connection)
        return migrations.allSatisfy { applied[$0.version]?.checksum == $0.checksum }
    }

    private func appliedVersions(_ connection: Connection) throws -> [Int: (name: String, checksum: String)] {
        var applied: [Int: (name: String, checksum: String)] = [:]
        for row in try connection.execute("SELECT version, name, checksum FROM schema_migrations").rows {
            applied[try row.int(0)] = (try row.string(1), try row.string(2))
        }
        return applied
    }
}
