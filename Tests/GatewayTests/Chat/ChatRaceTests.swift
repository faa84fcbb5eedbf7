import Foundation
import PersonalData
import Projections
import XCTest

/// A block or an unpairing races bursts of messages from both sides: no message lands after it
/// (its append is conditioned on the pair stream), `seq` has no gaps or duplicates, and the read
/// models equal a replay of the log.
final class ChatRaceTests: XCTestCase {
    func testABlockOrUnpairingAgainstBurstsOfMessagesFromBothSides() async throws {
        let fixture = try GatewayFixture("chat_race")
        try await fixture.run { client in
            let ann = try await client.signUp("raceann")
            let ben = try await client.signUp("raceben")
            var landed = 0
            var refused = 0
            for round in 0..<8 {
                let blocking = round % 2 == 0
                try await client.makeMates(round % 4 < 2 ? ann : ben, round % 4 < 2 ? ben : ann)
                let replies = try await withThrowingTaskGroup(of: (String, GatewayFixture.Reply).self) { group in
                    for index in 0..<10 {
                        for (from, to) in [(ann, ben), (ben, ann)] {
                            group.addTask {
                                let text = #"{"text": "round \#(round) message \#(index)"}"#
                                return (
                                    "message", try await client.send(.post, "/v1/chats/\(to.id)/messages", token: from.token, json: text)
                                )
                            }
                        }
                        if index == 5 {
                            group.addTask {
                                // Later each round, so that some rounds end mid-burst and some after it.
                                try await Task.sleep(for: .milliseconds(4 * round))
                                return blocking
                                    ? ("end", try await client.send(.put, "/v1/me/blocks/\(ben.id)", token: ann.token))
                                    : ("end", try await client.send(.delete, "/v1/me/mates/\(ann.id)", token: ben.token))
                            }
                        }
                    }
                    var all: [(String, GatewayFixture.Reply)] = []
                    for try await reply in group { all.append(reply) }
                    return all
                }
                let end = try XCTUnwrap(replies.first { $0.0 == "end" }?.1)
                XCTAssertEqual(end.status, 204, end.text)
                let endType = blocking ? "user_blocked" : "mates_unpaired"
                let endPosition = try XCTUnwrap(
                    Int64(try client.sql("SELECT max(position) FROM events WHERE event_type = $1", [endType])[0][0] ?? ""),
                    "round \(round): no \(endType)"
                )
                for (_, reply) in replies.filter({ $0.0 == "message" }) {
                    switch reply.status {
                    case 201:
                        landed += 1
                        let id = try XCTUnwrap(reply.json["message_id"] as? String)
                        let position = Int64(
                            try client.sql(
                                "SELECT position FROM events WHERE event_type = 'message_sent' AND data->>'message_id' = $1",
                                [id]
                            )[0][0]!
                        )!
                        XCTAssertLessThan(position, endPosition, "round \(round): a message landed after the \(endType)")
                    case 409:
                        XCTAssertEqual(reply.code, "not_mates", reply.text)
                        refused += 1
                    default:
                        XCTFail("round \(round): \(reply.status) \(reply.text)")
                    }
                }
                // Nothing landed after it in the log either (not only among the answers seen).
                let late = try client.sql(
                    "SELECT count(*) FROM events WHERE event_type = 'message_sent' AND position > $1",
                    [endPosition]
                )
                XCTAssertEqual(late, [["0"]], "round \(round)")
                if blocking {
                    let unblocked = try await client.send(.delete, "/v1/me/blocks/\(ben.id)", token: ann.token)
                    XCTAssertEqual(unblocked.status, 204)
                }
            }
            print("ChatRaceTests: \(landed) messages landed before their block or unpairing, \(refused) were refused")
            XCTAssertEqual(landed + refused, 8 * 20)
            XCTAssertGreaterThan(landed, 0)

            // seq: 1...n, no gaps, no duplicates, and equal to the stream's versions.
            let rows = try client.sql(
                "SELECT stream_version, (data->>'seq')::int FROM events WHERE event_type = 'message_sent' ORDER BY stream_version"
            )
            XCTAssertEqual(rows.count, landed)
            XCTAssertEqual(rows.map { Int($0[1]!)! }, Array(1...landed))
            XCTAssertEqual(rows.map { Int($0[0]!)! }, Array(1...landed))
            let reports = try Verifier(connectionString: client.runtimeURL, sealer: EventSealer(secret: fixture.configuration.secret)).run()
            XCTAssertFalse(reports.isEmpty)
            XCTAssertTrue(reports.contains { $0.table == "chat_messages" })
            for report in reports { XCTAssertEqual(report.differingRows, 0, "\(report.table): \(report.samples)") }
        }
    }
}
