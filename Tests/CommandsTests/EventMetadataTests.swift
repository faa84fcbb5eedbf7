import Commands
import Domain
import EventLog
import Foundation
import Postgres
import UUIDText
import XCTest

/// The metadata every event carries, as an auditor reads it back from the log.
final class EventMetadataTests: XCTestCase {
    func testEveryEventRecordsWhoWhyAndTheVersionsTheDecisionSaw() async throws {
        let (handler, pool) = try makeHandler("metadata")
        defer { Task { await pool.close() } }
        let users = try await register(2, with: handler)
        try await makeMates(users[0], users[1], with: handler)
        let correlation = UUID()
        let cause = UUID()
        var metadata = CommandMetadata(correlationID: correlation, causationID: cause, actor: users[0])
        metadata.isFirstUse = false
        let walkID = UUID()
        _ = try await handler.handle(
            .sendWalk(
                walkID: walkID,
                from: users[0],
                to: users[1],
                message: "Walk?",
                latitude: 1,
                longitude: 2,
                placeName: nil
            ),
            metadata: metadata
        )
        let event = try await handler.log.readStream(StreamName.walk(walkID).rawValue)[0]
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: event.metadata) as? [String: Any])
        XCTAssertEqual(json["actor"] as? String, users[0].uuidString.lowercased())
        XCTAssertEqual(json["command"] as? String, "SendWalk")
        XCTAssertEqual(json["command_id"] as? String, metadata.commandID.uuidString.lowercased())
        XCTAssertEqual(json["correlation_id"] as? String, correlation.uuidString.lowercased())
        XCTAssertEqual(json["causation_id"] as? String, cause.uuidString.lowercased())
        XCTAssertEqual(json["schema_version"] as? Int, 1)
        // The walk stream was empty and the pair stream at its acceptance (request + accept).
        XCTAssertEqual(
            json["read_versions"] as? [String: Int],
            [StreamName.walk(walkID).rawValue: 0, StreamName.mates(users[0], users[1]).rawValue: 2]
        )
    }

    func testRandomIDsAreVersionFourAndDistinct() {
        let ids = (0..<10_000).map { _ in UUID.random() }
        XCTAssertEqual(Set(ids).count, ids.count)
        for id in ids.prefix(100) {
            let text = id.uuidString.lowercased()
            XCTAssertEqual(Array(text)[14], "4", text)
            XCTAssertTrue("89ab".contains(Array(text)[19]), text)
        }
    }
}
