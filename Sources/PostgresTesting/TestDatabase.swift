import EventLog
import Foundation
import Postgres
import Synchronization

/// Databases for tests, on one private PostgreSQL cluster per test process that is started on
/// first use and stopped at exit: `swift test` needs nothing running beforehand.
///
/// Every call gets a fresh database copied from a migrated template, so suites never see each
/// other's rows, even when they run side by side.
public enum TestDatabase {
    private static let cluster = Mutex<EmbeddedPostgres?>(nil)
    private static let counter = Atomic<Int>(0)

    /// The shared test cluster, started on first use.
    public static func embedded() throws -> EmbeddedPostgres {
        try cluster.withLock { cluster in
            if let cluster { return cluster }
            let directory = "/tmp/sniffmeet-test-\(getpid())"
            let server = try EmbeddedPostgres(.init(dataDirectory: directory, durable: false))
            try server.start()
            atexit {
                TestDatabase.cluster.withLock { cluster in
                    try? cluster?.stop()
                    if let path = cluster?.options.dataDirectory { try? FileManager.default.removeItem(atPath: path) }
                }
            }
            let template = "sniffmeet_template"
            try server.createDatabase(template)
            let connection = try Connection(connectionString: server.connectionString(database: template))
            try Migrator.bundled().migrate(connection: connection)
            cluster = server
            return server
        }
    }

    /// A new, migrated, empty database; returns its connection string.
    public static func create(_ label: String = "test") throws -> String {
        let server = try embedded()
        let safe = label.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(30)
        let name = "t_\(safe)_\(counter.add(1, ordering: .relaxed).newValue)"
        try server.createDatabase(name, template: "sniffmeet_template")
        return server.connectionString(database: name)
    }
}
