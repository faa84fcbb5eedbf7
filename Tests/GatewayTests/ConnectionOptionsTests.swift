import Foundation
import Postgres
import PostgresTesting
import XCTest

@testable import Gateway

/// What every connection of a serving process is opened with.
final class ConnectionOptionsTests: XCTestCase {
    func testServingConnectionsGetTheirSettingsInEitherForm() {
        XCTAssertEqual(
            ConnectionOptions.forServing("host=/run/pg dbname=sniffmeet", statementTimeoutMilliseconds: 5000),
            "host=/run/pg dbname=sniffmeet options='-c statement_timeout=5000 -c max_parallel_workers_per_gather=0'"
        )
        XCTAssertEqual(
            ConnectionOptions.forServing("postgres://app@db/sniffmeet?sslmode=require"),
            "postgres://app@db/sniffmeet?sslmode=require&options=-c%20max_parallel_workers_per_gather%3D0"
        )
        XCTAssertEqual(
            ConnectionOptions.forServing("postgresql://app@db/sniffmeet", statementTimeoutMilliseconds: 250),
            "postgresql://app@db/sniffmeet?options=-c%20statement_timeout%3D250%20-c%20max_parallel_workers_per_gather%3D0"
        )
        let own = "host=db options='-c work_mem=64MB'"
        XCTAssertEqual(ConnectionOptions.forServing(own, statementTimeoutMilliseconds: 5000), own, "the operator's options are left alone")
    }

    /// PostgreSQL takes them: a connection opened with them runs no parallel plan.
    func testTheDatabaseAppliesThem() throws {
        let url = try TestDatabase.createLogins("options").runtime
        for form in [url, ConnectionOptions.forServing(url, statementTimeoutMilliseconds: 1500)] {
            let connection = try Connection(connectionString: form)
            let row = try connection.execute(
                "SELECT current_setting('max_parallel_workers_per_gather'), current_setting('statement_timeout')"
            ).first!
            if form == url {
                XCTAssertNotEqual(try row.string(0), "0", "the cluster's default allows parallel workers")
            } else {
                XCTAssertEqual(try row.string(0), "0")
                XCTAssertEqual(try row.string(1), "1500ms")
            }
        }
    }
}
