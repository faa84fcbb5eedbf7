import Foundation
import XCTest

/// A read marker never passes the conversation's last message: an `up_to` beyond it is capped,
/// so that the next message still counts as unread and the mate's "read" tick is not ahead.
final class ChatReadMarkerTests: XCTestCase {
    func testAReadMarkerBeyondTheLastMessageIsCappedAtIt() async throws {
        let fixture = try GatewayFixture("chat_read_cap")
        try await fixture.run { client in
            let a = try await client.signUp("capann")
            let b = try await client.signUp("capbob")
            try await client.makeMates(a, b)
            // Before any message: the marker stays at 0.
            let early = try await client.send(.put, "/v1/chats/\(a.id)/read", token: b.token, json: #"{"up_to": 7}"#)
            XCTAssertEqual(early.status, 204, early.text)
            XCTAssertEqual(try client.sql("SELECT up_to FROM chat_read_markers WHERE user_id = $1", [UUID(uuidString: b.id)!]), [["0"]])

            var last: GatewayFixture.Reply?
            for text in ["one", "two"] {
                last = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: "{\"text\": \"\(text)\"}")
                XCTAssertEqual(last?.status, 201, last?.text ?? "")
            }
            let far = try await client.send(.put, "/v1/chats/\(a.id)/read", token: b.token, json: #"{"up_to": 1000}"#)
            XCTAssertEqual(far.status, 204, far.text)
            let position = ["Min-Log-Position": last!.header("Log-Position")!]
            let listed = try await client.send(.get, "/v1/chats", token: b.token, headers: position)
            XCTAssertEqual(listed.items.first?["read_up_to"] as? Int, 2)
            XCTAssertEqual(listed.items.first?["unread_count"] as? Int, 0)
            let theirs = try await client.send(.get, "/v1/chats", token: a.token, headers: position)
            XCTAssertEqual(theirs.items.first?["their_read_up_to"] as? Int, 2)

            // The next message is unread: the marker did not run ahead of it.
            let third = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: #"{"text": "three"}"#)
            XCTAssertEqual(third.status, 201, third.text)
            let after = try await client.send(
                .get,
                "/v1/chats",
                token: b.token,
                headers: ["Min-Log-Position": third.header("Log-Position")!]
            )
            XCTAssertEqual(after.items.first?["read_up_to"] as? Int, 2)
            XCTAssertEqual(after.items.first?["unread_count"] as? Int, 1)
        }
    }
}
