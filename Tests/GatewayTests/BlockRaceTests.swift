import Foundation
import PersonalData
import Projections
import XCTest

/// A block races the blocked user's walks and mate requests: whatever commits first, nothing of
/// theirs survives the block (a walk or request that won the race is cancelled by it), and the
/// read models still equal a replay of the log (`verify`).
final class BlockRaceTests: XCTestCase {
    func testABlockAndTheBlockedUsersConcurrentWalksAndRequestsNeverBothSucceed() async throws {
        let fixture = try GatewayFixture("block_race")
        try await fixture.run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben")
            var wonThenCancelled = 0
            var refused = 0
            for round in 0..<12 {
                let racingWalks = round % 2 == 0
                var drops: [String] = []
                if racingWalks {
                    try await client.makeMates(ben, ana)
                } else {
                    for _ in 0..<3 {
                        drops.append(try await client.send(.post, "/v1/me/drop-tokens", token: ana.token).json["drop_token"] as! String)
                    }
                }
                let tokens = drops
                let replies = try await withThrowingTaskGroup(of: (String, GatewayFixture.Reply).self) { group in
                    for index in 0..<3 {
                        group.addTask {
                            if racingWalks {
                                return (
                                    "walk",
                                    try await client.send(
                                        .post,
                                        "/v1/walks",
                                        token: ben.token,
                                        json: WalkRoutesTests.walk(to: ana, message: "round \(round) walk \(index)")
                                    )
                                )
                            }
                            return (
                                "request",
                                try await client.send(
                                    .post,
                                    "/v1/mate-requests",
                                    token: ben.token,
                                    json: #"{"to": "\#(ana.id)", "drop_token": "\#(tokens[index])"}"#
                                )
                            )
                        }
                    }
                    group.addTask { ("block", try await client.send(.put, "/v1/me/blocks/\(ben.id)", token: ana.token)) }
                    var all: [(String, GatewayFixture.Reply)] = []
                    for try await reply in group { all.append(reply) }
                    return all
                }
                let block = try XCTUnwrap(replies.first { $0.0 == "block" }?.1)
                XCTAssertEqual(block.status, 204, block.text)
                let after = ["Min-Log-Position": try XCTUnwrap(block.header("Log-Position"))]
                for (kind, reply) in replies where kind != "block" {
                    switch reply.status {
                    case 201, 200:
                        // It committed before the block: the block has cancelled it.
                        wonThenCancelled += 1
                        if kind == "walk" {
                            let walk = try await client.send(
                                .get,
                                "/v1/walks/\(reply.json["walk_id"] as! String)",
                                token: ana.token,
                                headers: after
                            )
                            XCTAssertEqual(walk.json["status"] as? String, "cancelled", "round \(round): \(walk.text)")
                        }
                    case 403:
                        XCTAssertEqual(reply.code, "invalid_drop_token", reply.text)
                        refused += 1
                    case 409:
                        XCTAssertEqual(reply.code, "not_mates", reply.text)
                        refused += 1
                    default:
                        XCTFail("round \(round) \(kind): \(reply.status) \(reply.text)")
                    }
                }
                // Nothing of Ben's waits on Ana, and they are not mates.
                let walks = try await client.send(.get, "/v1/me/walks?direction=incoming&status=pending", token: ana.token, headers: after)
                XCTAssertEqual(walks.items.count, 0, "round \(round): \(walks.text)")
                let requests = try await client.send(
                    .get,
                    "/v1/me/mate-requests?direction=incoming&status=pending",
                    token: ana.token,
                    headers: after
                )
                XCTAssertEqual(requests.items.count, 0, "round \(round): \(requests.text)")
                let awaited1 = try await client.send(.get, "/v1/me/mates", token: ana.token, headers: after).items.count
                XCTAssertEqual(awaited1, 0)
                let awaited2 = try await client.send(.delete, "/v1/me/blocks/\(ben.id)", token: ana.token).status
                XCTAssertEqual(awaited2, 204)
            }
            print(
                "BlockRaceTests: \(wonThenCancelled) walks or requests committed before their block and were cancelled by it, \(refused) were refused"
            )
            XCTAssertEqual(wonThenCancelled + refused, 36)

            // The read models equal a replay of the log.
            let reports = try Verifier(connectionString: client.runtimeURL, sealer: EventSealer(secret: fixture.configuration.secret)).run()
            XCTAssertFalse(reports.isEmpty)
            for report in reports { XCTAssertEqual(report.differingRows, 0, "\(report.table): \(report.samples)") }
        }
    }
}
