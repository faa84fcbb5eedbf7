import Foundation
import Postgres
import PostgresTesting
import XCTest

/// Connection strings in both of libpq's forms: the database can be replaced in either.
final class ConnectionStringTests: XCTestCase {
    func testURIGetsItsDatabaseReplacedAndKeepsEverythingElse() throws {
        let replaced = try ConnectionString.replacingDatabase(
            in: "postgresql://app:p%40ss@db.internal:5433/sniffmeet?sslmode=require&application_name=x",
            with: "sniffmeet_bench"
        )
        let options = try ConnectionString.options(of: replaced)
        XCTAssertEqual(
            Dictionary(uniqueKeysWithValues: options.map { ($0.keyword, $0.value) }),
            [
                "user": "app", "password": "p@ss", "host": "db.internal", "port": "5433", "dbname": "sniffmeet_bench",
                "sslmode": "require", "application_name": "x",
            ]
        )
    }

    func testKeywordValueFormGetsItsDatabaseReplacedOrAdded() throws {
        XCTAssertEqual(
            try ConnectionString.replacingDatabase(in: "host=/tmp/x port=5432 dbname=old", with: "new"),
            "dbname='new' host='/tmp/x' port='5432'"
        )
        XCTAssertEqual(try ConnectionString.replacingDatabase(in: "host=/tmp/x", with: "new"), "host='/tmp/x' dbname='new'")
    }

    func testQuotedValuesSurviveTheRoundTrip() throws {
        let original = #"host=localhost application_name='it\'s a \\ test' dbname='my db'"#
        let options = try ConnectionString.options(of: original)
        XCTAssertEqual(options.first { $0.keyword == "application_name" }?.value, #"it's a \ test"#)
        XCTAssertEqual(try ConnectionString.options(of: ConnectionString.keywordValue(options)), options)
    }

    func testUnreadableStringsAreRefusedWithLibpqsReason() {
        XCTAssertThrowsError(try ConnectionString.options(of: "host")) { error in
            guard case PostgresError.connectionFailed(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.hasPrefix("invalid connection string: "), message)
        }
        XCTAssertThrowsError(try ConnectionString.options(of: "postgresql://localhost/db?nonsense=1"))
    }

    /// Against a server: a URI for the test cluster's Unix socket, pointed at another database.
    func testReplacedURIConnectsToTheOtherDatabase() throws {
        let options = try ConnectionString.options(of: try TestDatabase.create("conninfo"))
        let value = { (keyword: String) in options.first { $0.keyword == keyword }?.value ?? "" }
        let socket = value("host").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let uri = "postgresql://\(value("user"))@/\(value("dbname"))?host=\(socket)&port=\(value("port"))"
        let other = try ConnectionString.replacingDatabase(in: uri, with: "postgres")
        let connection = try Connection(connectionString: other)
        XCTAssertEqual(try connection.execute("SELECT current_database()").first?.string(0), "postgres")
    }
}
