import Domain
import EventLog
import Foundation
import Postgres
import PostgresTesting
import Projections
import XCTest

/// `mates` batch by batch: a pair ends as its batch's last event leaves it.
final class MatesProjectorTests: XCTestCase {
    private let a = UUID()
    private let b = UUID()
    private var position: Int64 = 0

    private func event(_ event: Event) -> ProjectedEvent {
        position += 1
        return ProjectedEvent(position: LogPosition(transactionID: 1, position: position), id: UUID(), stream: "mates", event: event)
    }

    private func accepted(_ seconds: TimeInterval) -> ProjectedEvent {
        event(.mateAccepted(MateAccepted(requestID: UUID(), from: a, to: b, at: Date(timeIntervalSince1970: seconds), mutual: false)))
    }

    private func unpaired(_ seconds: TimeInterval) -> ProjectedEvent {
        event(.matesUnpaired(MatesUnpaired(by: b, mate: a, at: Date(timeIntervalSince1970: seconds))))
    }

    /// Applies each batch in a transaction of its own, then reads the table: "user|mate|since".
    private func project(_ batches: [[ProjectedEvent]], on h: Harness) async throws -> [String] {
        try await h.query { connection in
            for batch in batches {
                try connection.transaction { connection in
                    try MatesProjector().apply(batch, to: .live, on: connection, sealer: TestDatabase.sealer)
                }
            }
            return try connection.execute(
                "SELECT user_id::text || '|' || mate_id::text || '|' || extract(epoch FROM mates_since)::bigint FROM mates ORDER BY 1"
            ).rows.map { try $0.string(0) }
        }
    }

    private func rows(since seconds: Int) -> [String] {
        ["\(a.lowercasedString)|\(b.lowercasedString)|\(seconds)", "\(b.lowercasedString)|\(a.lowercasedString)|\(seconds)"].sorted()
    }

    func testAPairThatPartsAndPairsAgainInOneBatchEndsAsMatesSinceTheSecondTime() async throws {
        let h = try Harness("mates_again_in_batch")
        let rows = try await project([[accepted(100), unpaired(200), accepted(300)]], on: h)
        XCTAssertEqual(rows, self.rows(since: 300))
    }

    func testAPairThatPartsInALaterBatchIsGoneAndPairingAgainLaterComesBack() async throws {
        let h = try Harness("mates_across_batches")
        let first = try await project([[accepted(100)]], on: h)
        XCTAssertEqual(first, rows(since: 100))
        let parted = try await project([[unpaired(200)]], on: h)
        XCTAssertEqual(parted, [])
        let again = try await project([[accepted(300), unpaired(400)], [accepted(500)]], on: h)
        XCTAssertEqual(again, rows(since: 500))
        // Mates already, parting and pairing again within one batch: the new time.
        let later = try await project([[unpaired(600), accepted(700)]], on: h)
        XCTAssertEqual(later, rows(since: 700))
    }
}
