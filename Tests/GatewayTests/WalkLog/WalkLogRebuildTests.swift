import Foundation
import PersonalData
import Postgres
import Projections
import XCTest

/// The `walk_logs` read model is rebuilt and verified like every other: logs recorded, hidden and
/// deleted give the same rows from scratch, and the stats read the same after a rebuild.
final class WalkLogRebuildTests: XCTestCase {
    func testVerifyAndRebuildGiveTheSameWalkLogs() async throws {
        let fixture = try GatewayFixture("walk_log_rebuild")
        let sealer = EventSealer(secret: fixture.configuration.secret)
        try await fixture.run { client in
            let owner = try await client.signUp("owner")
            let other = try await client.signUp("other")
            let kept = try await client.record(owner)
            let hidden = try await client.record(owner, WalkLogFixtures.loop(time: WalkLogFixtures.start + 7_200))
            let gone = try await client.record(other)
            let patched = try await client.send(
                .patch,
                "/v1/walk-logs/\(hidden.json["walk_log_id"] as! String)",
                token: owner.token,
                json: #"{"visibility": "private"}"#
            )
            XCTAssertEqual(patched.status, 200)
            let deleted = try await client.send(.delete, "/v1/walk-logs/\(gone.json["walk_log_id"] as! String)", token: other.token)
            XCTAssertEqual(deleted.status, 204)
            let fresh = ["Min-Log-Position": deleted.header("Log-Position")!]
            let list = try await client.send(.get, "/v1/me/walk-logs", token: owner.token, headers: fresh)
            XCTAssertEqual(list.items.count, 2)
            XCTAssertEqual(try client.sql("SELECT visibility FROM walk_logs ORDER BY started_at").map { $0[0] }, ["mates", "private"])
            XCTAssertNotNil(kept.json["walk_log_id"])

            let reports = try Verifier(connectionString: client.runtimeURL, sealer: sealer).run()
            let walkLogs = try XCTUnwrap(reports.first { $0.table == "walk_logs" })
            XCTAssertEqual(walkLogs.differingRows, 0, "\(walkLogs.samples)")
            let before = try ReadModelChecksum.compute(
                projectors: [WalkLogsProjector()],
                on: Connection(connectionString: fixture.ownerURL)
            )
            XCTAssertTrue(before["walk_logs"]?.hasPrefix("2:") ?? false, "\(before)")
            let outcome = try await RebuildJob(connectionString: fixture.ownerURL, sealer: sealer)
                .run(onThread: { false }, progress: { _ in })
            guard case .swapped = outcome else { return XCTFail("rebuild: \(outcome)") }
            XCTAssertEqual(
                try ReadModelChecksum.compute(projectors: [WalkLogsProjector()], on: Connection(connectionString: fixture.ownerURL)),
                before
            )
        }
    }
}
