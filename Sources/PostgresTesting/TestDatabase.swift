@preconcurrency import Crypto
import EventLog
import Foundation
import PersonalData
import Postgres
import Synchronization

/// Databases for tests, on one private PostgreSQL cluster per test process that is started on
/// first use and stopped at exit: `swift test` needs nothing running beforehand.
///
/// Every call gets a fresh database copied from a migrated template, so suites never see each
/// other's rows, even when they run side by side. Each database is owned by the owner login,
/// which migrated it, and reachable as the runtime login as `sniffmeet serve` would use it.
public enum TestDatabase {
    /// The edge for personal data that a test process's handlers and projectors share (one
    /// master key per process, as one per deployment).
    public static let sealer = EventSealer(secret: masterKey)
    /// The master key of this test process.
    public static let masterKey = SymmetricKey(size: .bits256)

    /// The two logins of one test database.
    public struct Logins: Sendable {
        /// The database's name.
        public var name: String
        /// As the owner (`EmbeddedPostgres.ownerLogin`): migrations, rebuilds, test setup.
        public var owner: String
        /// As the runtime login (`EmbeddedPostgres.runtimeLogin`): what `sniffmeet serve` may do.
        public var runtime: String
    }

    private static let cluster = Mutex<EmbeddedPostgres?>(nil)
    private static let counter = Atomic<Int>(0)
    private static let template = "sniffmeet_template"

    /// The shared test cluster, started on first use.
    public static func embedded() throws -> EmbeddedPostgres {
        try cluster.withLock { cluster in
            if let cluster { return cluster }
            let directory = "/tmp/sniffmeet-test-\(getpid())"
            // Process ids are reused: a folder of this name was left by an earlier process that
            // did not reach its exit handler (killed), with that run's schema. It is not ours.
            try? FileManager.default.removeItem(atPath: directory)
            let server = try EmbeddedPostgres(.init(dataDirectory: directory, durable: false))
            try server.start()
            atexit {
                TestDatabase.cluster.withLock { cluster in
                    try? cluster?.stop()
                    if let path = cluster?.options.dataDirectory { try? FileManager.default.removeItem(atPath: path) }
                }
            }
            try server.createRoles()
            try server.createDatabase(template, owner: EmbeddedPostgres.ownerLogin)
            // Migrated by the owner, as `sniffmeet migrate` does it: the grants and default
            // privileges of the runtime role are then those of a real deployment.
            do {
                let connection = try Connection(
                    connectionString: server.connectionString(database: template, user: EmbeddedPostgres.ownerLogin)
                )
                try Migrator.bundled().migrate(connection: connection)
            }
            cluster = server
            return server
        }
    }

    /// A new, migrated, empty database; returns the owner's connection string.
    public static func create(_ label: String = "test") throws -> String {
        try createLogins(label).owner
    }

    /// A new, migrated, empty database; returns both logins' connection strings.
    public static func createLogins(_ label: String = "test") throws -> Logins {
        let server = try embedded()
        let safe = label.lowercased().filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) }.prefix(30)
        let name = "t_\(safe)_\(counter.add(1, ordering: .relaxed).newValue)"
        try server.createDatabase(name, template: template, owner: EmbeddedPostgres.ownerLogin)
        return Logins(
            name: name,
            owner: server.connectionString(database: name, user: EmbeddedPostgres.ownerLogin),
            runtime: server.connectionString(database: name, user: EmbeddedPostgres.runtimeLogin)
        )
    }
}
