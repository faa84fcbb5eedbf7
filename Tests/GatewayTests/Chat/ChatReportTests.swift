import Foundation
import XCTest

/// A report naming a message keeps its id, and the operators see the message's text while it is
/// readable: once unsent, the report stays and its text is gone.
final class ChatReportTests: XCTestCase {
    func testAReportedMessageIsStoredAndItsTextShownUntilUnsent() async throws {
        let fixture = try GatewayFixture("chat_report")
        try await fixture.run { client in
            let ann = try await client.signUp("repann")
            let bob = try await client.signUp("repbob")
            try await client.makeMates(ann, bob)
            let sent = try await client.send(.post, "/v1/chats/\(ann.id)/messages", token: bob.token, json: #"{"text": "Quokkarude 41"}"#)
            XCTAssertEqual(sent.status, 201, sent.text)
            let messageID = try XCTUnwrap(sent.json["message_id"] as? String)
            let filed = try await client.send(
                .post,
                "/v1/reports",
                token: ann.token,
                json: #"{"user_id": "\#(bob.id)", "reason": "harassment", "message_id": "\#(messageID)"}"#
            )
            XCTAssertEqual(filed.status, 201, filed.text)
            let reportID = try XCTUnwrap(filed.json["report_id"] as? String)
            // The reports read model follows the log: wait for the projector, then check the row.
            let stored = "SELECT message_id::text FROM reports WHERE report_id = '\(reportID)'"
            for _ in 0..<100 where try client.sql(stored).isEmpty { try await Task.sleep(nanoseconds: 50_000_000) }
            XCTAssertEqual(try client.sql(stored), [[messageID]])

            let open = try await client.send(
                .get,
                "/v1/admin/reports",
                token: "admin-secret",
                headers: ["Min-Log-Position": filed.header("Log-Position")!]
            )
            XCTAssertEqual(open.status, 200, open.text)
            let report = try XCTUnwrap(open.items.first { $0["report_id"] as? String == reportID })
            XCTAssertEqual(report["message_id"] as? String, messageID)
            XCTAssertEqual(report["message_text"] as? String, "Quokkarude 41")
            XCTAssertTrue(report["walk_message"] is NSNull)

            // Bob unsends it: the report stays, naming the message, with no text.
            let unsent = try await client.send(.delete, "/v1/chats/\(ann.id)/messages/\(messageID)", token: bob.token)
            XCTAssertEqual(unsent.status, 200, unsent.text)
            let after = try await client.send(
                .get,
                "/v1/admin/reports",
                token: "admin-secret",
                headers: ["Min-Log-Position": unsent.header("Log-Position")!]
            )
            let still = try XCTUnwrap(after.items.first { $0["report_id"] as? String == reportID })
            XCTAssertEqual(still["message_id"] as? String, messageID)
            XCTAssertTrue(still["message_text"] is NSNull, "an unsent message's text is shown to operators")

            // A report without a message names none.
            let plain = try await client.send(.post, "/v1/reports", token: bob.token, json: #"{"user_id": "\#(ann.id)", "reason": "spam"}"#)
            XCTAssertEqual(plain.status, 201, plain.text)
            let plainID = try XCTUnwrap(plain.json["report_id"] as? String)
            let listed = try await client.send(
                .get,
                "/v1/admin/reports",
                token: "admin-secret",
                headers: ["Min-Log-Position": plain.header("Log-Position")!]
            )
            let plainRow = try XCTUnwrap(listed.items.first { $0["report_id"] as? String == plainID })
            XCTAssertTrue(plainRow["message_id"] is NSNull)
            XCTAssertTrue(plainRow["message_text"] is NSNull)
        }
    }
}
