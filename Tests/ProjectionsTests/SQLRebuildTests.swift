import EventLog
import Foundation
import Postgres
import PostgresTesting
import Projections
import XCTest

/// The bench's reference: the in-SQL rebuild must build the very rows the projectors build,
/// or the ratio would compare different work.
final class SQLRebuildTests: XCTestCase {
    func test_bulkLoadedLog_inSQLRebuildEqualsTheProjectorsRebuild() async throws {
        let connectionString = try TestDatabase.create("sql_rebuild")
        let loaded = try await Task.detached {
            var workload = SyntheticWorkload(seed: 5, users: 300)
            return try BulkLoader.load(&workload, events: 20_000, on: Connection(connectionString: connectionString))
        }.value
        XCTAssertGreaterThanOrEqual(loaded, 20_000)
        let outcome = try await RebuildJob(connectionString: connectionString).run(onThread: { false }, progress: { _ in })
        guard case .swapped(_, let events) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(events, loaded)
        let (projected, inSQL) = try await Task.detached {
            let connection = try Connection(connectionString: connectionString)
            try SQLRebuild.run(into: TableSet(suffix: "__sql"), on: connection)
            return (try ReadModelChecksum.compute(on: connection),
                    try ReadModelChecksum.compute(tables: TableSet(suffix: "__sql"), on: connection))
        }.value
        XCTAssertEqual(inSQL, projected)
        XCTAssertTrue(projected.values.allSatisfy { !$0.hasPrefix("0:") }, "\(projected)")
    }
}
