import EventLog
import Foundation
import Postgres
import PostgresTesting
import XCTest

final class MigratorTests: XCTestCase {
    func testMigrationsApplyOnceAndRefuseEditedFiles() async throws {
        let server = try TestDatabase.embedded()
        try server.createDatabase("migrator_test")
        let connectionString = server.connectionString(database: "migrator_test")
        let first = Migrator(migrations: [
            .init(version: 1, name: "0001_a.sql", sql: "CREATE TABLE a (x int);"),
            .init(version: 2, name: "0002_b.sql", sql: "CREATE TABLE b (x int);"),
        ])
        // Two processes migrating at once: each file is applied exactly once.
        let applied = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let connection = try Connection(connectionString: connectionString)
                    return try first.migrate(connection: connection)
                }
            }
            return try await group.reduce(into: [String]()) { $0 += $1 }
        }
        XCTAssertEqual(applied.sorted(), ["0001_a.sql", "0002_b.sql"])
        let connection = try Connection(connectionString: connectionString)
        XCTAssertTrue(try first.isCurrent(connection: connection))

        let edited = Migrator(migrations: [
            .init(version: 1, name: "0001_a.sql", sql: "CREATE TABLE a (x bigint);"),
            .init(version: 2, name: "0002_b.sql", sql: "CREATE TABLE b (x int);"),
        ])
        XCTAssertThrowsError(try edited.migrate(connection: connection)) { error in
            guard case Migrator.Failure.changedAfterApply(let version, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(version, 1)
        }
        XCTAssertFalse(try edited.isCurrent(connection: connection))

        // A failing file leaves nothing behind and is not recorded.
        let failing = Migrator(
            migrations: first.migrations + [
                .init(version: 3, name: "0003_bad.sql", sql: "CREATE TABLE c (x int); SELECT 1/0;")
            ]
        )
        XCTAssertThrowsError(try failing.migrate(connection: connection))
        XCTAssertFalse(try connection.execute("SELECT to_regclass('c') IS NOT NULL").first!.bool(0))
        XCTAssertEqual(try connection.execute("SELECT count(*) FROM schema_migrations").first!.int(0), 2)
    }

    func testBundledSchemaIsCurrentInTestDatabases() async throws {
        let connection = try Connection(connectionString: try TestDatabase.create("bundled"))
        XCTAssertTrue(try Migrator.bundled().isCurrent(connection: connection))
        XCTAssertTrue(try Migrator.bundled().migrate(connection: connection).isEmpty)
    }
}
