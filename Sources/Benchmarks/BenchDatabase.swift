import EventLog
import Postgres

/// The databases benchmarks run in: fresh, migrated, beside the project's database on the same
/// server, so a run never touches real data and starts from the same state.
public enum BenchDatabase {
    /// Drops and recreates the database `name` on the server `connectionString` reaches, applies
    /// the migrations, and returns a connection string for it (`connectionString` may be a URI
    /// or `key=value`). Blocking.
    public static func recreate(_ name: String, server connectionString: String) throws -> String {
        let admin = try Connection(connectionString: connectionString)
        // Identifiers cannot be parameters; `name` is a constant of the calling program.
        _ = try admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        _ = try admin.execute("CREATE DATABASE \(name)")
        let target = try ConnectionString.replacingDatabase(in: connectionString, with: name)
        let connection = try Connection(connectionString: target)
        try Migrator.bundled().migrate(connection: connection)
        return target
    }
}
