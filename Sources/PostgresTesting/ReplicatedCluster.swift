import EventLog
import Foundation
import Postgres
import Synchronization

/// A primary and a streaming standby of their own, for tests of failover, synchronous commit and
/// read replicas: each test that needs one starts one (server-wide settings such as
/// `synchronous_standby_names` would disturb the shared test cluster) and calls `stop()`.
///
/// Durable (`synchronous_commit` on): without it a commit never waits for the standby.
public final class ReplicatedCluster: Sendable {
    public let primary: EmbeddedPostgres
    public let standby: EmbeddedPostgres
    /// The migrated database on both.
    public let database = "sniffmeet"
    private let directory: String
    private static let counter = Atomic<Int>(0)

    /// Starts a primary with a migrated database and a standby of it (`applyDelay`: the
    /// standby's `recovery_min_apply_delay`).
    public init(applyDelay: Duration? = nil) throws {
        directory = "/tmp/sm-ha-\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        primary = try EmbeddedPostgres(.init(dataDirectory: directory + "/a", durable: true, maxConnections: 100))
        standby = try EmbeddedPostgres(.init(dataDirectory: directory + "/b", durable: true, maxConnections: 100))
        try primary.start()
        try primary.createRoles()
        try primary.createDatabase(database, owner: EmbeddedPostgres.ownerLogin)
        let owner = try Connection(connectionString: primary.connectionString(database: database, user: EmbeddedPostgres.ownerLogin))
        try Migrator.bundled().migrate(connection: owner)
        try standby.startStandby(of: primary, name: "standby", applyDelay: applyDelay)
    }

    /// Both servers, the primary first, as one libpq connection string that only settles on a
    /// server taking writes: what `DATABASE_URL` names in production.
    public func multiHostURL(user: String = EmbeddedPostgres.runtimeLogin) -> String {
        "host='\(primary.socketDirectory),\(standby.socketDirectory)' port='5432,5432' user='\(user)' dbname='\(database)'"
            + " target_session_attrs=read-write connect_timeout=2"
    }

    /// One server's connection string.
    public func url(_ server: EmbeddedPostgres, user: String = EmbeddedPostgres.runtimeLogin) -> String {
        server.connectionString(database: database, user: user)
    }

    /// Waits until the standby has replayed everything the primary committed so far.
    public func waitForStandby(timeout: Duration = .seconds(10)) throws {
        let target = try Connection(connectionString: primary.connectionString())
            .execute("SELECT pg_current_wal_lsn()::text").first!.string(0)
        let reader = try Connection(connectionString: standby.connectionString())
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let caughtUp = try reader.execute("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", [target]).first!.bool(0)
            if caughtUp { return }
            usleep(20_000)
        }
        throw EmbeddedPostgres.Failure.commandFailed(command: "wait for standby", output: "not caught up within \(timeout)")
    }

    /// Stops both servers and removes their folders.
    public func stop() {
        try? standby.stop()
        try? primary.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
