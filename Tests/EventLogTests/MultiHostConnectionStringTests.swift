import Foundation
import Postgres
import XCTest

/// `DATABASE_URL` may name every node of a cluster; whatever rewrites a connection string (the
/// bench's and the tools' database switch, the gateway's statement timeout) keeps the hosts and
/// `target_session_attrs`, in both of libpq's forms.
final class MultiHostConnectionStringTests: XCTestCase {
    func testMultiHostURIKeepsItsHostsWhenTheDatabaseIsReplaced() throws {
        let replaced = try ConnectionString.replacingDatabase(
            in: "postgresql://app@pg1:5432,pg2:5433,pg3/sniffmeet?target_session_attrs=read-write&connect_timeout=2",
            with: "sniffmeet_bench"
        )
        let options = Dictionary(uniqueKeysWithValues: try ConnectionString.options(of: replaced).map { ($0.keyword, $0.value) })
        XCTAssertEqual(options["host"], "pg1,pg2,pg3")
        XCTAssertEqual(options["port"], "5432,5433,")
        XCTAssertEqual(options["target_session_attrs"], "read-write")
        XCTAssertEqual(options["dbname"], "sniffmeet_bench")
        XCTAssertEqual(options["connect_timeout"], "2")
    }

    func testMultiHostKeywordFormKeepsItsHostsWhenTheDatabaseIsReplaced() throws {
        let replaced = try ConnectionString.replacingDatabase(
            in: "host=pg1,pg2,pg3 port=5432 dbname=sniffmeet target_session_attrs=read-write",
            with: "other"
        )
        XCTAssertEqual(replaced, "dbname='other' host='pg1,pg2,pg3' port='5432' target_session_attrs='read-write'")
        // And it reads back the same.
        let options = Dictionary(uniqueKeysWithValues: try ConnectionString.options(of: replaced).map { ($0.keyword, $0.value) })
        XCTAssertEqual(options["host"], "pg1,pg2,pg3")
    }
}
