import Foundation
import Postgres
import PostgresTesting
import XCTest

@testable import EventLog
@testable import Projections

/// The log's hot statements stay on its indexes under the plans they get in production:
/// prepared and generic (group commit sets `plan_cache_mode = force_generic_plan` for its
/// transaction; the projection runner's connection prepares every statement under it), on a log
/// large enough for the planner's choice to be the one it makes there. A sequential scan of
/// `events` in one of them costs milliseconds a call and grows with the log; the capped lag
/// count's first version did that (87 ms a call), and only a benchmark showed it.
final class HotStatementPlanTests: XCTestCase {
    /// Every statement run per command, per projector batch or per scrape that reads `events`.
    static let statements: [(name: String, sql: String)] =
        [
            ("single-event append", AppendPlan.singleEventSQL),
            ("single-event append without a condition", AppendPlan.singleEventUnconditionedSQL),
            ("a batch's shared append", AppendPlan.insertSQL),
            ("guarded rows' condition", "SELECT r.appended FROM unnest($1::uuid[]) AS r(appended) WHERE \(GuardedTable.rowAppendedHere)"),
            ("stream reads after versions", EventLog.readStreamsAfterSQL),
            ("feed page", EventLog.feedPageSQL),
            ("feed's look beyond the horizon", EventLog.pendingBeyondHorizonSQL),
            ("projector lag", ProjectorStatus.lagSQL),
        ] + EventLog.readFewStreamsSQL.enumerated().map { ("reads of \($0.offset + 1) streams", $0.element) }

    func testHotStatementsNeverScanTheWholeLog() throws {
        let connection = try Connection(connectionString: try TestDatabase.create("plans"))
        // 200,000 events over 20,000 streams, with fresh statistics.
        try connection.execute(
            """
            INSERT INTO events (stream_id, stream_version, event_id, event_type, data, metadata)
            SELECT 'user-' || (n % 20000), n / 20000 + 1, gen_random_uuid(), 'profile_changed', '{"dog_name":"Bori"}', '{}'
            FROM generate_series(0, 199999) AS n
            """
        )
        try connection.execute("ANALYZE events")
        try connection.execute("SET plan_cache_mode = force_generic_plan")
        for (name, sql) in Self.statements {
            let plan = try Self.genericPlan(of: sql, on: connection)
            let scans = try Self.sequentialScans(of: "events", in: plan)
            XCTAssertEqual(scans, 0, "\(name): its generic plan scans the whole log:\n\(plan)")
        }
    }

    /// The check itself: a statement that can only scan is caught.
    func testASequentialScanOfTheLogIsCaught() throws {
        let connection = try Connection(connectionString: try TestDatabase.create("plans_caught"))
        try connection.execute("SET plan_cache_mode = force_generic_plan")
        let plan = try Self.genericPlan(of: "SELECT count(*) FROM events WHERE data->>'dog_name' = $1::text", on: connection)
        XCTAssertEqual(try Self.sequentialScans(of: "events", in: plan), 1)
    }

    /// `EXPLAIN` of `sql` prepared, with NULL for every parameter: under `force_generic_plan`
    /// the generic plan, which does not depend on them.
    static func genericPlan(of sql: String, on connection: Connection) throws -> String {
        let parameters = sql.matches(of: /\$(\d+)/).compactMap { Int($0.1) }.max() ?? 0
        try connection.execute("PREPARE hot AS \(sql)")
        defer { _ = try? connection.execute("DEALLOCATE hot") }
        let arguments = parameters == 0 ? "" : "(" + Array(repeating: "NULL", count: parameters).joined(separator: ", ") + ")"
        return try connection.execute("EXPLAIN (FORMAT JSON) EXECUTE hot\(arguments)").first!.string(0)
    }

    /// Sequential scans of `table` anywhere in a JSON plan (subplans and init plans included).
    static func sequentialScans(of table: String, in plan: String) throws -> Int {
        func count(_ node: [String: Any]) -> Int {
            let here = node["Node Type"] as? String == "Seq Scan" && node["Relation Name"] as? String == table ? 1 : 0
            return here + ((node["Plans"] as? [[String: Any]]) ?? []).map(count).reduce(0, +)
        }
        let explained = try JSONSerialization.jsonObject(with: Data(plan.utf8)) as? [[String: Any]]
        return (explained ?? []).compactMap { $0["Plan"] as? [String: Any] }.map(count).reduce(0, +)
    }
}
