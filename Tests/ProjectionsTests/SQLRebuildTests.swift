import Benchmarks
import EventLog
import Foundation
import Postgres
import PostgresTesting
import XCTest

@testable import Projections

/// The bench's reference: the in-SQL rebuild must build the very rows the projectors build,
/// or the ratio would compare different work.
final class SQLRebuildTests: XCTestCase {
    func testBulkLoadedLogInSQLRebuildEqualsTheProjectorsRebuild() async throws {
        let connectionString = try TestDatabase.create("sql_rebuild")
        let loaded = try await Task.detached {
            var workload = SyntheticWorkload(seed: 5, users: 300)
            return try BulkLoader.load(&workload, events: 20_000, on: Connection(connectionString: connectionString))
        }.value
        XCTAssertGreaterThanOrEqual(loaded, 20_000)
        let outcome = try await RebuildJob(connectionString: connectionString, sealer: TestDatabase.sealer).run(
            onThread: { false },
            progress: { _ in }
        )
        guard case .swapped(_, let events) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(events, loaded)
        let (projected, inSQL) = try await Task.detached {
            let connection = try Connection(connectionString: connectionString)
            try SQLRebuild.run(into: TableSet(suffix: "__sql"), on: connection)
            return (
                try ReadModelChecksum.compute(on: connection),
                try ReadModelChecksum.compute(tables: TableSet(suffix: "__sql"), on: connection)
            )
        }.value
        XCTAssertEqual(inSQL, projected)
        // The synthetic workload records no walk logs and writes no chat, and the in-SQL reference
        // rebuilds no chat tables.
        XCTAssertTrue(
            projected.filter { $0.key != "walk_logs" && !$0.key.hasPrefix("chat_") }.values.allSatisfy { !$0.hasPrefix("0:") },
            "\(projected)"
        )
    }
}

/// Array parameters (written byte by byte in the Postgres module) give PostgreSQL's array literals.
final class ArrayParameterTests: XCTestCase {
    func testArrayLiterals() {
        let ids = [UUID(), UUID()]
        XCTAssertEqual(ids.postgresText, "{\(ids[0].uuidString.lowercased()),\(ids[1].uuidString.lowercased())}")
        XCTAssertEqual([ids[0], nil].postgresText, "{\(ids[0].uuidString.lowercased()),NULL}")
        let texts: [String?] = ["a\"b\\c", nil, "Gassi? 🐕", "{x,y}"]
        XCTAssertEqual(texts.postgresText, #"{"a\"b\\c",NULL,"Gassi? 🐕","{x,y}"}"#)
        let dates: [Date?] = [Date(timeIntervalSince1970: 1_800_000_000.123), nil, Date(timeIntervalSince1970: -86_400.5)]
        XCTAssertEqual(dates.postgresText, #"{"2027-01-15 08:00:00.123000+00",NULL,"1969-12-30 23:59:59.500000+00"}"#)
        XCTAssertEqual([52.52, nil, -0.5].postgresText, "{52.52,NULL,-0.5}")
        XCTAssertEqual([UInt64(7), 18_446_744_073_709_551_615].postgresText, "{7,18446744073709551615}")
        XCTAssertEqual([true, false].postgresText, "{t,f}")
    }

    func testSchemaVersionReadsTheUsualFormWithoutAParseAndFallsBack() {
        XCTAssertEqual(RecordedEvent.schemaVersion(in: Data(#"{"command_id": "x", "schema_version": 3}"#.utf8)), 3)
        XCTAssertEqual(RecordedEvent.schemaVersion(in: Data(#"{"schema_version":12,"actor":null}"#.utf8)), 12)
        XCTAssertEqual(RecordedEvent.schemaVersion(in: Data(#"{"schema_version":"2"}"#.utf8)), 2)
        XCTAssertEqual(RecordedEvent.schemaVersion(in: Data(#"{"actor":"a"}"#.utf8)), 1)
    }
}
