import Foundation
import XCTest

/// Many sends at once into one conversation all conflict on its stream's version (= `seq`):
/// each must land, in gap-free `seq` order, after as many retries as it takes; none may fail
/// with a 5xx or an undocumented code. And a refused send writes no message key.
final class ChatHotConversationTests: XCTestCase {
    func testThirtyConcurrentSendsFromBothMatesAllLandWithGapFreeSeq() async throws {
        try await withMates("chat_hot", "hotann", "hotben") { client, ann, ben in
            let replies = try await withThrowingTaskGroup(of: GatewayFixture.Reply.self) { group in
                // 15 each: within the per-user message burst (20).
                for index in 0..<15 {
                    for (from, to) in [(ann, ben), (ben, ann)] {
                        group.addTask {
                            try await client.send(
                                .post,
                                "/v1/chats/\(to.id)/messages",
                                token: from.token,
                                json: #"{"text": "hot \#(index)"}"#
                            )
                        }
                    }
                }
                var all: [GatewayFixture.Reply] = []
                for try await reply in group { all.append(reply) }
                return all
            }
            let failed = replies.filter { $0.status != 201 }.map { "\($0.status) \($0.code ?? "") \($0.text)" }
            XCTAssertEqual(failed, [], "every concurrent send lands")
            let seqs = try replies.filter { $0.status == 201 }.map { try XCTUnwrap($0.json["seq"] as? Int) }.sorted()
            XCTAssertEqual(seqs, Array(1...30))
            let rows = try client.sql(
                "SELECT stream_version, (data->>'seq')::int FROM events WHERE event_type = 'message_sent' ORDER BY stream_version"
            )
            XCTAssertEqual(rows.map { Int($0[0]!)! }, Array(1...30))
            XCTAssertEqual(rows.map { Int($0[1]!)! }, Array(1...30))
            XCTAssertEqual(try client.sql("SELECT count(*) FROM message_keys"), [["30"]])
            // Thirty appends to one stream at once: most ran again after a conflict, and /metrics
            // says so. A send that conflicted waits its turn on the stream and then appends
            // without another conflict (`StreamTurns`): about one conflict per send (29 in a run),
            // where retrying alone cost 237.
            let metrics = try await client.send(.get, "/metrics").text
            let conflicts = try XCTUnwrap(Self.counter("sniffmeet_command_conflicts_total", in: metrics), metrics)
            XCTAssertGreaterThan(conflicts, 0)
            XCTAssertLessThanOrEqual(conflicts, 30, "a send conflicts about once, then waits its turn")
            let waits = try XCTUnwrap(Self.counter("sniffmeet_command_turn_waits_total", in: metrics), metrics)
            XCTAssertGreaterThan(waits, 0, "sends waited their turn")
            XCTAssertLessThan(waits, 30, "the first send never waits")
        }
    }

    /// Unsends (their own transaction: the message key goes with the event) into a conversation
    /// that sends keep busy: each conflicts at most about once, then takes its turn on the
    /// stream like the sends, and every one lands.
    func testUnsendsAmidConcurrentSendsAllLand() async throws {
        try await withMates("chat_hot_unsend", "unsann", "unsben") { client, ann, ben in
            var earlier: [(from: GatewayFixture.User, to: GatewayFixture.User, id: String)] = []
            for index in 0..<8 {
                for (from, to) in [(ann, ben), (ben, ann)] {
                    let sent = try await client.send(
                        .post,
                        "/v1/chats/\(to.id)/messages",
                        token: from.token,
                        json: #"{"text": "early \#(index)"}"#
                    )
                    XCTAssertEqual(sent.status, 201, sent.text)
                    earlier.append((from, to, try XCTUnwrap(sent.json["message_id"] as? String)))
                }
            }
            let replies = try await withThrowingTaskGroup(of: (String, GatewayFixture.Reply).self) { group in
                for message in earlier {
                    group.addTask {
                        (
                            "unsend",
                            try await client.send(.delete, "/v1/chats/\(message.to.id)/messages/\(message.id)", token: message.from.token)
                        )
                    }
                }
                for index in 0..<8 {
                    for (from, to) in [(ann, ben), (ben, ann)] {
                        group.addTask {
                            (
                                "send",
                                try await client.send(
                                    .post,
                                    "/v1/chats/\(to.id)/messages",
                                    token: from.token,
                                    json: #"{"text": "late \#(index)"}"#
                                )
                            )
                        }
                    }
                }
                var all: [(String, GatewayFixture.Reply)] = []
                for try await reply in group { all.append(reply) }
                return all
            }
            let failed = replies.filter { $0.1.status != ($0.0 == "send" ? 201 : 200) }.map {
                "\($0.0) \($0.1.status) \($0.1.code ?? "") \($0.1.text)"
            }
            XCTAssertEqual(failed, [], "every send and unsend lands")
            // The sends' seq follow the 16 earlier messages without gaps; the stream holds 16 sends,
            // 16 unsends and 16 sends, one version each.
            let seqs = try replies.filter { $0.0 == "send" }.map { try XCTUnwrap($0.1.json["seq"] as? Int) }.sorted()
            XCTAssertEqual(seqs, Array(17...32))
            XCTAssertEqual(
                try client.sql("SELECT count(*), max(stream_version) FROM events WHERE stream_id LIKE 'chat-%'"),
                [["48", "48"]]
            )
            XCTAssertEqual(
                try client.sql("SELECT count(*) FILTER (WHERE sealed_key IS NULL), count(*) FROM message_keys"),
                [["16", "32"]],
                "every unsent message's key destroyed, the late ones' kept"
            )
            let metrics = try await client.send(.get, "/metrics").text
            let conflicts = Self.counter("sniffmeet_command_conflicts_total", in: metrics, command: "UnsendMessage") ?? 0
            XCTAssertLessThanOrEqual(conflicts, 16, "an unsend conflicts about once, then waits its turn")
            let waits = Self.counter("sniffmeet_command_turn_waits_total", in: metrics, command: "UnsendMessage") ?? 0
            XCTAssertGreaterThan(waits, 0, "unsends waited their turn")
        }
    }

    /// Runs `body` on a fresh gateway (database `name`) where two users just became mates.
    private func withMates(
        _ name: String,
        _ first: String,
        _ second: String,
        _ body: @escaping @Sendable (GatewayFixture.Client, GatewayFixture.User, GatewayFixture.User) async throws -> Void
    ) async throws {
        try await GatewayFixture(name).run { client in
            let (one, other) = (try await client.signUp(first), try await client.signUp(second))
            _ = try await client.makeMates(one, other)
            try await body(client, one, other)
        }
    }

    /// The value of the SendMessage series of the counter `name` on the `/metrics` page.
    private static func counter(_ name: String, in metrics: String, command: String = "SendMessage") -> Int? {
        let series = name + #"{command=""# + command + #""} "#
        return metrics.split(separator: "\n").first { $0.hasPrefix(series) }.flatMap { Int($0.dropFirst(series.count)) }
    }

    func testARefusedSendLeavesNoMessageKey() async throws {
        let fixture = try GatewayFixture("chat_refused_key")
        try await fixture.run { client in
            let ann = try await client.signUp("refann")
            let ben = try await client.signUp("refben")
            let refused = try await client.send(.post, "/v1/chats/\(ben.id)/messages", token: ann.token, json: #"{"text": "hello"}"#)
            XCTAssertEqual(refused.status, 409, refused.text)
            XCTAssertEqual(refused.code, "not_mates")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM message_keys"), [["0"]])
            // A send that lands writes exactly its own key.
            _ = try await client.makeMates(ann, ben)
            let sent = try await client.send(.post, "/v1/chats/\(ben.id)/messages", token: ann.token, json: #"{"text": "hello"}"#)
            XCTAssertEqual(sent.status, 201, sent.text)
            let id = try XCTUnwrap(sent.json["message_id"] as? String)
            XCTAssertEqual(try client.sql("SELECT message_id::text FROM message_keys"), [[id]])
        }
    }
}
