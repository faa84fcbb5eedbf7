import Domain
import EventLog
import Foundation
import Postgres
import PostgresTesting
import Projections
import XCTest

/// The inbox entry of an answered walk carries the request's message and place. The notifications
/// projector takes them from the walks read model when it holds the walk, and from the log when
/// it does not (its projector behind, a rebuild into an empty database); both give the same entries.
final class WalkAnswerEntriesTests: XCTestCase {
    func options() -> ProjectionRunner.Options {
        var options = ProjectionRunner.Options()
        options.batchSize = 40  // answers mostly land in a later batch than their request
        options.pollInterval = .milliseconds(50)
        return options
    }

    /// The entries of answered and expired walks: user, category, and the request's text and place.
    func answerEntries(_ h: Harness) async throws -> [String] {
        try await h.query { connection in
            try connection.execute(
                """
                SELECT notification_id, user_id, category, coalesce(message, '-'), coalesce(latitude, -1),
                       coalesce(longitude, -1), coalesce(place_name, '-')
                FROM notifications WHERE category IN ('walk_accepted', 'walk_declined', 'walk_expired')
                ORDER BY notification_id
                """
            ).rows.map { row in try (0..<7).map { try row.string($0) }.joined(separator: "|") }
        }
    }

    /// Projects the harness's log with `projectors` until every one of them has caught up.
    func project(_ h: Harness, with projectors: [any Projector]) async throws {
        let runner = ProjectionRunner(
            log: h.log,
            sealer: TestDatabase.sealer,
            connectionString: h.connectionString,
            projectors: projectors,
            options: options()
        )
        runner.start()
        let caughtUp = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        let status = try await runner.status()
        await runner.stop()
        XCTAssertTrue(caughtUp, "\(status)")
    }

    func testAnsweredWalksReadFromTheWalksReadModelOrTheLogGiveTheSameEntries() async throws {
        let h = try Harness("walk_answer_entries", seed: 11, sealed: true)
        try await h.append(1200)
        // Without the walks projector its table stays empty: every request comes from the log.
        try await project(h, with: [NotificationsProjector()])
        let empty = try await h.query { try $0.execute("SELECT count(*) FROM walks").rows[0].int(0) }
        XCTAssertEqual(empty, 0)
        let fromLog = try await answerEntries(h)

        // With it caught up, a rebuild of the inbox finds every request in the read model.
        try await project(h, with: [WalksProjector()])
        let walks = try await h.query { try $0.execute("SELECT count(*) FROM walks").rows[0].int(0) }
        XCTAssertGreaterThan(walks, 0)
        let outcome = try await RebuildJob(
            connectionString: h.ownerConnectionString,
            sealer: TestDatabase.sealer,
            projectors: [NotificationsProjector()],
            batchSize: 40
        ).run(onThread: { false }, progress: { _ in })
        guard case .swapped = outcome else { return XCTFail("not swapped: \(outcome)") }
        let fromReadModel = try await answerEntries(h)

        XCTAssertGreaterThan(fromLog.count, 10)
        // Every answered walk's entry names its request: message and place were found.
        XCTAssertTrue(fromLog.allSatisfy { !$0.contains("|-|-1|-1|") }, "\(fromLog.prefix(3))")
        XCTAssertEqual(fromReadModel, fromLog)
    }

    func testTheWalksReadModelGivesEachRequestAsTheLogHoldsIt() async throws {
        let h = try Harness("walk_requests_read_back", seed: 5, sealed: true)
        try await h.append(600)
        try await project(h, with: [WalksProjector()])
        let ids = try await h.query { connection in
            try connection.execute("SELECT walk_id FROM walks ORDER BY walk_id").rows.map { try $0.uuid(0) }
        }
        XCTAssertGreaterThan(ids.count, 0)
        let unknown = UUID()
        let found = try await h.query { try WalksQueries.requested(ids + [unknown], on: $0) }
        XCTAssertNil(found[unknown])
        XCTAssertEqual(Set(found.keys), Set(ids))
        for id in ids {
            guard case .walk(let state)? = h.workload.states[.walk(id)], let request = state.request else {
                return XCTFail("walk \(id) is not in the workload's fold")
            }
            let read = try XCTUnwrap(found[id])
            XCTAssertEqual([read.from, read.to], [request.from, request.to])
            XCTAssertEqual(read.message, request.message)
            XCTAssertEqual([read.latitude, read.longitude], [request.latitude, request.longitude])
            XCTAssertEqual(read.placeName, request.placeName)
            XCTAssertEqual(read.expiresAt.timeIntervalSince1970, request.expiresAt.timeIntervalSince1970, accuracy: 0.001)
        }
    }
}
