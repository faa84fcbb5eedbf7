import Foundation
import HTTPTypes
import Photos
import XCTest

extension AuthorizationTests {
    /// Two mates hold a conversation (texts, a photo, read markers); an outsider then tries every
    /// chat route on it: `404` or `409`, never a byte of it, and the log does not move.
    func testAnOutsiderSeesNothingOfAConversation() async throws {
        try await GatewayFixture("chat_outsider").run { client in
            let owner = try await client.signUp("chowner")
            let mate = try await client.signUp("chmate")
            let outsider = try await client.signUp("chout")
            try await client.makeMates(owner, mate)
            let photo = try await client.send(
                .post,
                "/v1/chats/\(mate.id)/photos",
                token: owner.token,
                body: try SyntheticPhoto.make(width: 400, height: 300, .jpeg()),
                headers: ["Content-Type": "image/jpeg"]
            )
            let photoID = try XCTUnwrap(photo.json["photo_id"] as? String, photo.text)
            let sent = try await client.send(
                .post,
                "/v1/chats/\(mate.id)/messages",
                token: owner.token,
                json: #"{"text": "Meet at the east gate", "photo_id": "\#(photoID)"}"#
            )
            let messageID = try XCTUnwrap(sent.json["message_id"] as? String, sent.text)
            let reply = try await client.send(.post, "/v1/chats/\(owner.id)/messages", token: mate.token, json: #"{"text": "Sure thing"}"#)
            let replyID = try XCTUnwrap(reply.json["message_id"] as? String, reply.text)
            let position = ["Min-Log-Position": reply.header("Log-Position")!]
            let read = try await client.send(.put, "/v1/chats/\(mate.id)/read", token: owner.token, json: #"{"up_to": 2}"#)
            XCTAssertEqual(read.status, 204)
            let seen = try await client.send(.get, "/v1/chats", token: owner.token, headers: position)
            XCTAssertEqual(seen.items.count, 1, "the owner's conversation is really there")

            let secrets = [owner.id, mate.id, messageID, replyID, photoID, "east gate", "Sure thing"]
            func assertNothingLeaks(_ reply: GatewayFixture.Reply, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
                for secret in secrets {
                    XCTAssertFalse(reply.text.contains(secret), "\(what) leaked \(secret): \(reply.text)", file: file, line: line)
                }
            }
            let t = outsider.token
            let list = try await client.send(.get, "/v1/chats", token: t, headers: position)
            XCTAssertEqual(list.status, 200)
            XCTAssertEqual(list.items.count, 0)
            assertNothingLeaks(list, "GET /v1/chats")
            for other in [owner.id, mate.id] {
                for path in [
                    "/v1/chats/\(other)/messages", "/v1/chats/\(other)/messages?after=0", "/v1/chats/\(other)/photos/\(photoID)",
                    "/v1/chats/\(other)/photos/\(photoID)/thumbnail",
                ] {
                    let reply = try await client.send(.get, path, token: t, headers: position)
                    XCTAssertError(reply, 404, "not_found")
                    assertNothingLeaks(reply, path)
                }
            }
            let events = try client.sql("SELECT count(*) FROM events")[0][0]
            var attempts: [(HTTPRequest.Method, String, String?)] = [
                (.post, "/v1/reports", #"{"user_id": "\#(owner.id)", "reason": "spam", "message_id": "\#(messageID)"}"#),
                (.post, "/v1/reports", #"{"user_id": "\#(mate.id)", "reason": "spam", "message_id": "\#(replyID)"}"#),
            ]
            for other in [owner.id, mate.id] {
                attempts += [
                    (.post, "/v1/chats/\(other)/messages", #"{"text": "let me in"}"#),
                    (.post, "/v1/chats/\(other)/messages", #"{"photo_id": "\#(photoID)"}"#),
                    (.patch, "/v1/chats/\(other)/messages/\(messageID)", #"{"text": "mine now"}"#),
                    (.patch, "/v1/chats/\(other)/messages/\(replyID)", #"{"text": "mine now"}"#),
                    (.delete, "/v1/chats/\(other)/messages/\(messageID)", nil),
                    (.delete, "/v1/chats/\(other)/messages/\(replyID)", nil),
                    (.put, "/v1/chats/\(other)/read", #"{"up_to": 2}"#),
                    (.post, "/v1/chats/\(other)/typing", nil),
                ]
            }
            for (method, path, body) in attempts {
                let reply = try await client.send(method, path, token: t, json: body)
                XCTAssertTrue([400, 404, 409].contains(reply.status), "\(method) \(path): \(reply.status) \(reply.text)")
                XCTAssertNotNil(reply.code)
                assertNothingLeaks(reply, "\(method) \(path)")
            }
            let upload = try await client.send(
                .post,
                "/v1/chats/\(owner.id)/photos",
                token: t,
                body: try SyntheticPhoto.make(width: 40, height: 30, .jpeg()),
                headers: ["Content-Type": "image/jpeg"]
            )
            XCTAssertError(upload, 409, "not_mates")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0], events, "an outsider's attempt changed the log")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM chat_photos"), [["1"]])
            // The mates' conversation is as it was.
            let intact = try await client.send(.get, "/v1/chats/\(owner.id)/messages", token: mate.token)
            XCTAssertEqual(intact.items.map { $0["text"] as? String }, ["Sure thing", "Meet at the east gate"])
            let theirList = try await client.send(.get, "/v1/chats", token: mate.token)
            XCTAssertEqual(theirList.items.first?["their_read_up_to"] as? Int, 2)
            // A report naming a message: theirs, in our conversation.
            let reported = try await client.send(
                .post,
                "/v1/reports",
                token: mate.token,
                json: #"{"user_id": "\#(owner.id)", "reason": "spam", "message_id": "\#(messageID)"}"#
            )
            XCTAssertEqual(reported.status, 201, reported.text)
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/reports",
                    token: mate.token,
                    json: #"{"user_id": "\#(owner.id)", "reason": "spam", "message_id": "\#(replyID)"}"#
                ),
                404,
                "not_found"
            )
        }
    }
}
