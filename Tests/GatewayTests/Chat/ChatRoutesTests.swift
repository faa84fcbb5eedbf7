import Domain
import Foundation
import Gateway
import HTTPTypes
import Hummingbird
import Photos
import XCTest

/// Chat between mates through HTTP: every route's success and every error code of API.md.
final class ChatRoutesTests: XCTestCase {
    static func text(_ text: String) -> String { #"{"text": "\#(text)"}"# }

    func testSendListReadAndCatchUp() async throws {
        try await GatewayFixture("chat_routes").run { client in
            let a = try await client.signUp("chatann")
            let b = try await client.signUp("chatbob", dog: "Luna")
            let c = try await client.signUp("chatcy")
            // Not mates yet: not_mates, and nothing to read.
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("hi")),
                409,
                "not_mates"
            )
            XCTAssertError(try await client.send(.get, "/v1/chats/\(b.id)/messages", token: a.token), 404, "not_found")
            try await client.makeMates(a, b)
            // Empty conversation of mates: 200, no items.
            let empty = try await client.send(.get, "/v1/chats/\(b.id)/messages", token: a.token)
            XCTAssertEqual(empty.status, 200, empty.text)
            XCTAssertEqual(empty.items.count, 0)
            // Bad bodies.
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: "{}"),
                400,
                "validation_failed",
                field: "text"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("")),
                400,
                "validation_failed",
                field: "text"
            )
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/chats/\(b.id)/messages",
                    token: a.token,
                    json: Self.text(String(repeating: "x", count: 1001))
                ),
                400,
                "validation_failed",
                field: "text"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: #"{"text": "bad\u0007"}"#),
                400,
                "validation_failed",
                field: "text"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: #"{"photo_id": "nope"}"#),
                400,
                "validation_failed",
                field: "photo_id"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: #"{"photo_id": "\#(UUID())"}"#),
                400,
                "validation_failed",
                field: "photo_id"
            )
            XCTAssertError(try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: "{"), 400, "invalid_json")
            XCTAssertError(try await client.send(.post, "/v1/chats/\(b.id)/messages", json: Self.text("hi")), 401, "unauthorized")
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(a.id)/messages", token: a.token, json: Self.text("me")),
                409,
                "not_mates"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/chats/not-a-uuid/messages", token: a.token, json: Self.text("hi")),
                404,
                "not_found"
            )
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events WHERE event_type = 'message_sent'"), [["0"]])

            // Sent: 201 with seq 1, then a reply with seq 2 from the other side.
            let first = try await client.send(
                .post,
                "/v1/chats/\(b.id)/messages",
                token: a.token,
                json: Self.text("Running ten minutes late")
            )
            XCTAssertEqual(first.status, 201, first.text)
            XCTAssertEqual(first.json["seq"] as? Int, 1)
            XCTAssertEqual(first.json["from"] as? String, a.id)
            XCTAssertEqual(first.json["text"] as? String, "Running ten minutes late")
            XCTAssertTrue(first.json["photo_id"] is NSNull)
            XCTAssertTrue(first.json["edited_at"] is NSNull)
            XCTAssertEqual(first.json["unsent"] as? Bool, false)
            XCTAssertNotNil(first.header("Log-Position"))
            let reply = try await client.send(
                .post,
                "/v1/chats/\(a.id)/messages",
                token: b.token,
                json: Self.text("The east gate instead?")
            )
            XCTAssertEqual(reply.json["seq"] as? Int, 2, reply.text)
            let third = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("OK"))
            XCTAssertEqual(third.json["seq"] as? Int, 3, third.text)
            let position = ["Min-Log-Position": third.header("Log-Position")!]

            // The conversation list of both sides.
            let listA = try await client.send(.get, "/v1/chats", token: a.token, headers: position)
            XCTAssertEqual(listA.status, 200, listA.text)
            XCTAssertEqual(listA.items.count, 1)
            let convA = listA.items[0]
            XCTAssertEqual(convA["user_id"] as? String, b.id)
            XCTAssertEqual((convA["card"] as? [String: Any])?["dog_name"] as? String, "Luna")
            XCTAssertEqual((convA["last_message"] as? [String: Any])?["seq"] as? Int, 3)
            XCTAssertEqual(convA["unread_count"] as? Int, 1)
            XCTAssertEqual(convA["read_up_to"] as? Int, 0)
            XCTAssertEqual(convA["their_read_up_to"] as? Int, 0)
            XCTAssertEqual(convA["can_write"] as? Bool, true)
            XCTAssertNotNil(convA["updated_at"] as? String)
            let listB = try await client.send(.get, "/v1/chats", token: b.token, headers: position)
            XCTAssertEqual(listB.items.first?["unread_count"] as? Int, 2)
            let r1 = try await client.send(.get, "/v1/chats", token: c.token, headers: position)
            XCTAssertEqual(r1.items.count, 0)

            // Newest first, paged; ?after= oldest first.
            let page1 = try await client.send(.get, "/v1/chats/\(b.id)/messages?limit=2", token: a.token, headers: position)
            XCTAssertEqual(page1.items.map { $0["seq"] as? Int }, [3, 2])
            let cursor = try XCTUnwrap(page1.json["next_cursor"] as? String)
            let page2 = try await client.send(.get, "/v1/chats/\(b.id)/messages?limit=2&cursor=\(cursor)", token: a.token)
            XCTAssertEqual(page2.items.map { $0["seq"] as? Int }, [1])
            XCTAssertTrue(page2.json["next_cursor"] is NSNull)
            let after = try await client.send(.get, "/v1/chats/\(a.id)/messages?after=1", token: b.token, headers: position)
            XCTAssertEqual(after.items.map { $0["seq"] as? Int }, [2, 3])
            let afterPaged = try await client.send(.get, "/v1/chats/\(a.id)/messages?after=0&limit=2", token: b.token)
            XCTAssertEqual(afterPaged.items.map { $0["seq"] as? Int }, [1, 2])
            let rest = try await client.send(
                .get,
                "/v1/chats/\(a.id)/messages?after=0&limit=2&cursor=\(afterPaged.json["next_cursor"] as! String)",
                token: b.token
            )
            XCTAssertEqual(rest.items.map { $0["seq"] as? Int }, [3])
            XCTAssertError(
                try await client.send(.get, "/v1/chats/\(a.id)/messages?after=-1", token: b.token),
                400,
                "validation_failed",
                field: "after"
            )
            XCTAssertError(
                try await client.send(.get, "/v1/chats/\(a.id)/messages?cursor=zzz", token: b.token),
                400,
                "validation_failed",
                field: "cursor"
            )
            XCTAssertError(try await client.send(.get, "/v1/chats?limit=0", token: b.token), 400, "validation_failed", field: "limit")

            // Read markers: forward only; the other side sees them.
            let read = try await client.send(.put, "/v1/chats/\(a.id)/read", token: b.token, json: #"{"up_to": 3}"#)
            XCTAssertEqual(read.status, 204, read.text)
            let r2 = try await client.send(.put, "/v1/chats/\(a.id)/read", token: b.token, json: #"{"up_to": 1}"#)
            XCTAssertEqual(r2.status, 204)
            let listB2 = try await client.send(.get, "/v1/chats", token: b.token)
            XCTAssertEqual(listB2.items.first?["read_up_to"] as? Int, 3)
            XCTAssertEqual(listB2.items.first?["unread_count"] as? Int, 0)
            let r3 = try await client.send(.get, "/v1/chats", token: a.token)
            XCTAssertEqual(r3.items.first?["their_read_up_to"] as? Int, 3)
            XCTAssertError(
                try await client.send(.put, "/v1/chats/\(a.id)/read", token: b.token, json: #"{"up_to": -1}"#),
                400,
                "validation_failed",
                field: "up_to"
            )
            XCTAssertError(
                try await client.send(.put, "/v1/chats/\(a.id)/read", token: b.token, json: #"{"up_to": "x"}"#),
                400,
                "validation_failed",
                field: "up_to"
            )
            XCTAssertError(try await client.send(.put, "/v1/chats/\(a.id)/read", token: b.token, json: "["), 400, "invalid_json")
            XCTAssertError(try await client.send(.put, "/v1/chats/\(c.id)/read", token: b.token, json: #"{"up_to": 1}"#), 404, "not_found")

            // Typing: mates only.
            let r4 = try await client.send(.post, "/v1/chats/\(b.id)/typing", token: a.token)
            XCTAssertEqual(r4.status, 204)
            XCTAssertError(try await client.send(.post, "/v1/chats/\(c.id)/typing", token: a.token), 409, "not_mates")
        }
    }

    func testEditAndUnsend() async throws {
        try await GatewayFixture("chat_edit").run { client in
            let a = try await client.signUp("editann")
            let b = try await client.signUp("editbob")
            try await client.makeMates(a, b)
            let sent = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("North gate"))
            let id = try XCTUnwrap(sent.json["message_id"] as? String)

            let edited = try await client.send(.patch, "/v1/chats/\(b.id)/messages/\(id)", token: a.token, json: Self.text("South gate"))
            XCTAssertEqual(edited.status, 200, edited.text)
            XCTAssertEqual(edited.json["text"] as? String, "South gate")
            XCTAssertEqual(edited.json["seq"] as? Int, 1)
            XCTAssertNotNil(edited.json["edited_at"] as? String)
            XCTAssertError(
                try await client.send(.patch, "/v1/chats/\(a.id)/messages/\(id)", token: b.token, json: Self.text("mine")),
                403,
                "not_sender"
            )
            XCTAssertError(
                try await client.send(.patch, "/v1/chats/\(b.id)/messages/\(id)", token: a.token, json: Self.text("")),
                400,
                "validation_failed",
                field: "text"
            )
            XCTAssertError(
                try await client.send(.patch, "/v1/chats/\(b.id)/messages/\(UUID())", token: a.token, json: Self.text("x")),
                404,
                "not_found"
            )
            XCTAssertError(try await client.send(.delete, "/v1/chats/\(a.id)/messages/\(id)", token: b.token), 403, "not_sender")
            XCTAssertError(try await client.send(.delete, "/v1/chats/\(b.id)/messages/\(UUID())", token: a.token), 404, "not_found")

            let unsent = try await client.send(.delete, "/v1/chats/\(b.id)/messages/\(id)", token: a.token)
            XCTAssertEqual(unsent.status, 200, unsent.text)
            XCTAssertEqual(unsent.json["unsent"] as? Bool, true)
            XCTAssertTrue(unsent.json["text"] is NSNull)
            XCTAssertEqual(unsent.json["seq"] as? Int, 1)
            XCTAssertError(
                try await client.send(.patch, "/v1/chats/\(b.id)/messages/\(id)", token: a.token, json: Self.text("back")),
                409,
                "message_unsent"
            )
            // Unsending again: the same answer.
            let r5 = try await client.send(.delete, "/v1/chats/\(b.id)/messages/\(id)", token: a.token)
            XCTAssertEqual(r5.json["unsent"] as? Bool, true)
            let seen = try await client.send(.get, "/v1/chats/\(a.id)/messages", token: b.token)
            XCTAssertEqual(seen.items.first?["unsent"] as? Bool, true)
            XCTAssertTrue(seen.items.first?["text"] is NSNull)

        }
    }

    /// The 15-minute window is the domain's (ChatRulesTests); its HTTP answer is checked on the
    /// mapping every refusal goes through (ClientErrorCodesTests reaches it with a moved clock).
    func testEditWindowPassedIs410AndMessageUnsentIs409() {
        XCTAssertEqual(DomainError.editWindowPassed.apiError.status, .gone)
        XCTAssertEqual(DomainError.editWindowPassed.apiError.code, "edit_window_passed")
        XCTAssertEqual(DomainError.messageUnsent.apiError.status, .conflict)
        XCTAssertEqual(DomainError.notMates.apiError.status, .conflict)
    }

    func testBlockAndUnpairMakeTheConversationReadOnly() async throws {
        try await GatewayFixture("chat_block").run { client in
            let a = try await client.signUp("blockann")
            let b = try await client.signUp("blockbob")
            try await client.makeMates(a, b)
            let sent = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("hello"))
            XCTAssertEqual(sent.status, 201)
            let unpair = try await client.send(.delete, "/v1/me/mates/\(a.id)", token: b.token)
            XCTAssertEqual(unpair.status, 204, unpair.text)
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("hi?")),
                409,
                "not_mates"
            )
            XCTAssertError(try await client.send(.post, "/v1/chats/\(b.id)/typing", token: a.token), 409, "not_mates")
            let position = ["Min-Log-Position": unpair.header("Log-Position")!]
            // History stays readable to both, read-only.
            let history = try await client.send(.get, "/v1/chats/\(a.id)/messages", token: b.token, headers: position)
            XCTAssertEqual(history.items.count, 1)
            let list = try await client.send(.get, "/v1/chats", token: a.token, headers: position)
            XCTAssertEqual(list.items.first?["can_write"] as? Bool, false)
            // Pairing again continues it.
            try await client.makeMates(b, a)
            let again = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("back"))
            XCTAssertEqual(again.json["seq"] as? Int, 2, again.text)
            // A block: neither can write; the blocker's list no longer shows it.
            let block = try await client.send(.put, "/v1/me/blocks/\(a.id)", token: b.token)
            XCTAssertEqual(block.status, 204, block.text)
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("hey")),
                409,
                "not_mates"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(a.id)/messages", token: b.token, json: Self.text("hey")),
                409,
                "not_mates"
            )
            let afterBlock = ["Min-Log-Position": block.header("Log-Position")!]
            let r6 = try await client.send(.get, "/v1/chats", token: b.token, headers: afterBlock)
            XCTAssertEqual(r6.items.count, 0)
            let r7 = try await client.send(.get, "/v1/chats", token: a.token, headers: afterBlock)
            XCTAssertEqual(r7.items.first?["can_write"] as? Bool, false)
        }
    }

    func testMessagesPastTheBudgetAreRateLimited() async throws {
        try await GatewayFixture("chat_rate") {
            $0.rateLimits = RateLimiter.Budgets(ip: nil, signUp: nil, user: nil, messages: .init(burst: 20, perSecond: 5))
        }
        .run { client in
            let a = try await client.signUp("rateann")
            let b = try await client.signUp("ratebob")
            try await client.makeMates(a, b)
            var statuses: [Int] = []
            for index in 0..<25 {
                statuses.append(
                    try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("m\(index)")).status
                )
            }
            XCTAssertEqual(statuses.filter { $0 == 201 }.count, 20, "\(statuses)")
            let limited = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("more"))
            XCTAssertError(limited, 429, "rate_limited")
            XCTAssertNotNil(limited.header("Retry-After"))
            // The other side's budget is their own.
            let r8 = try await client.send(.post, "/v1/chats/\(a.id)/messages", token: b.token, json: Self.text("hi"))
            XCTAssertEqual(r8.status, 201)
        }
    }

    func testIdempotencyKeyIsTheAppsMessageID() async throws {
        try await GatewayFixture("chat_idem").run { client in
            let a = try await client.signUp("idemann")
            let b = try await client.signUp("idembob")
            try await client.makeMates(a, b)
            let key = ["Idempotency-Key": "msg-\(UUID())"]
            let first = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("once"), headers: key)
            let again = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("once"), headers: key)
            XCTAssertEqual(first.status, 201)
            XCTAssertEqual(again.status, 201)
            XCTAssertEqual(first.json["message_id"] as? String, again.json["message_id"] as? String)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events WHERE event_type = 'message_sent'"), [["1"]])
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("twice"), headers: key),
                422,
                "idempotency_key_reused"
            )
            // A key of another command whose answer is no longer kept (24 hours, moved back here):
            // the command id is that command's, whose replay sent no message; `422`, never a 5xx.
            let profileKey = ["Idempotency-Key": "profile-\(UUID())"]
            let changed = try await client.send(.patch, "/v1/me", token: a.token, json: #"{"dog_name": "Bo"}"#, headers: profileKey)
            XCTAssertEqual(changed.status, 200, changed.text)
            _ = try client.sql("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'")
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: Self.text("hi"), headers: profileKey),
                422,
                "idempotency_key_reused"
            )
        }
    }

    func testChatPhotosOnlyForThePair() async throws {
        try await GatewayFixture("chat_photos").run { client in
            let a = try await client.signUp("picann")
            let b = try await client.signUp("picbob")
            let c = try await client.signUp("piccy")
            let jpeg = try SyntheticPhoto.make(width: 1600, height: 1200, .jpeg())
            XCTAssertError(try await Self.upload(jpeg, to: b, token: a.token, client: client), 409, "not_mates")
            try await client.makeMates(a, b)
            XCTAssertError(
                try await Self.upload(jpeg, to: b, token: a.token, client: client, type: "text/plain"),
                415,
                "unsupported_image"
            )
            XCTAssertError(try await Self.upload(Data("not an image".utf8), to: b, token: a.token, client: client), 400, "invalid_image")
            let uploaded = try await Self.upload(jpeg, to: b, token: a.token, client: client)
            XCTAssertEqual(uploaded.status, 201, uploaded.text)
            let photo = try XCTUnwrap(uploaded.json["photo_id"] as? String)
            // Not a profile photo: the id alone fetches nothing.
            let r9 = try await client.send(.get, "/v1/photos/\(photo)")
            XCTAssertEqual(r9.status, 404)
            // Only in this conversation.
            XCTAssertError(
                try await client.send(.post, "/v1/chats/\(c.id)/messages", token: a.token, json: #"{"photo_id": "\#(photo)"}"#),
                400,
                "validation_failed",
                field: "photo_id"
            )
            let sent = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: #"{"photo_id": "\#(photo)"}"#)
            XCTAssertEqual(sent.status, 201, sent.text)
            XCTAssertEqual(sent.json["photo_id"] as? String, photo)
            XCTAssertTrue(sent.json["text"] is NSNull)
            let mine = try await client.send(.get, "/v1/chats/\(b.id)/photos/\(photo)", token: a.token)
            XCTAssertEqual(mine.status, 200)
            XCTAssertEqual(mine.header("Content-Type"), "image/jpeg")
            XCTAssertEqual(SyntheticPhoto.jpegSize(mine.body)?.width, 1080)
            let theirs = try await client.send(.get, "/v1/chats/\(a.id)/photos/\(photo)/thumbnail", token: b.token)
            XCTAssertEqual(theirs.status, 200)
            XCTAssertEqual(SyntheticPhoto.jpegSize(theirs.body)?.width, 200)
            let etag = try XCTUnwrap(theirs.header("ETag"))
            let notModified = try await client.send(
                .get,
                "/v1/chats/\(a.id)/photos/\(photo)/thumbnail",
                token: b.token,
                headers: ["If-None-Match": etag]
            )
            XCTAssertEqual(notModified.status, 304)
            XCTAssertError(try await client.send(.get, "/v1/chats/\(a.id)/photos/\(photo)", token: c.token), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/chats/\(b.id)/photos/\(photo)", token: c.token), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/chats/\(b.id)/photos/\(photo)"), 401, "unauthorized")
            // Unsent: the photo is gone.
            let id = try XCTUnwrap(sent.json["message_id"] as? String)
            let r10 = try await client.send(.delete, "/v1/chats/\(b.id)/messages/\(id)", token: a.token)
            XCTAssertEqual(r10.status, 200)
            XCTAssertError(try await client.send(.get, "/v1/chats/\(a.id)/photos/\(photo)", token: b.token), 404, "not_found")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM chat_photos"), [["0"]])
        }
    }

    static func upload(
        _ bytes: Data,
        to mate: GatewayFixture.User,
        token: String,
        client: GatewayFixture.Client,
        type: String = "image/jpeg"
    ) async throws -> GatewayFixture.Reply {
        try await client.send(.post, "/v1/chats/\(mate.id)/photos", token: token, body: bytes, headers: ["Content-Type": type])
    }
}
