import Foundation
import Gateway
import PersonalData
import Photos
import Postgres
import Projections
import XCTest

/// Unsending and deleting the sender's account leave nothing of a message readable anywhere in
/// the database, the log included (`pg_dump` of everything), while the other side's messages
/// stay readable through the API; `verify` still passes.
final class ChatErasureTests: XCTestCase {
    func testUnsentAndErasedMessagesAreNowhereInTheDump() async throws {
        let fixture = try GatewayFixture("chat_erasure")
        try await fixture.run { client in
            let ann = try await client.signUp("eraann")
            let bob = try await client.signUp("erabob")
            let cy = try await client.signUp("eracy")
            try await client.makeMates(ann, bob)
            try await client.makeMates(bob, cy)

            // A photo and a text, edited, then unsent.
            let (photo, photoBytes) = try await Self.photo(from: ann, to: bob, client: client)
            let sent = try await client.send(
                .post,
                "/v1/chats/\(bob.id)/messages",
                token: ann.token,
                json: #"{"text": "Zebraquince 777 secret", "photo_id": "\#(photo)"}"#
            )
            XCTAssertEqual(sent.status, 201, sent.text)
            let id = try XCTUnwrap(sent.json["message_id"] as? String)
            let edited = try await client.send(
                .patch,
                "/v1/chats/\(bob.id)/messages/\(id)",
                token: ann.token,
                json: #"{"text": "Zebraquince 888 edit"}"#
            )
            XCTAssertEqual(edited.status, 200, edited.text)
            let kept = try await client.send(.post, "/v1/chats/\(ann.id)/messages", token: bob.token, json: #"{"text": "Bravoreply kept"}"#)
            XCTAssertEqual(kept.status, 201, kept.text)
            // Before: the text is in the read model and the photo is served.
            var dump = try AccountDeletionTests.dump(client.ownerURL)
            XCTAssertTrue(dump.contains("Zebraquince 888 edit"), "the read model holds the text before the unsend")
            XCTAssertTrue(dump.contains(photoBytes), "the photo is stored before the unsend")

            let unsent = try await client.send(.delete, "/v1/chats/\(bob.id)/messages/\(id)", token: ann.token)
            XCTAssertEqual(unsent.status, 200, unsent.text)
            let after = ["Min-Log-Position": unsent.header("Log-Position")!]
            let seen = try await client.send(.get, "/v1/chats/\(ann.id)/messages", token: bob.token, headers: after)
            XCTAssertEqual(seen.items.map { $0["text"] as? String }, ["Bravoreply kept", nil])
            XCTAssertEqual(seen.items.last?["unsent"] as? Bool, true)
            XCTAssertTrue(seen.items.last?["photo_id"] is NSNull)
            dump = try AccountDeletionTests.dump(client.ownerURL)
            for gone in ["Zebraquince", photo, photoBytes] {
                XCTAssertFalse(dump.contains(gone), "after the unsend the dump holds \(gone)")
            }
            XCTAssertTrue(dump.contains("Bravoreply kept") || dump.contains("message_sent"), "the dump is not simply empty")

            // Deleting the sender's account: every message and photo of theirs goes.
            let (photo2, photo2Bytes) = try await Self.photo(from: ann, to: bob, client: client)
            let second = try await client.send(
                .post,
                "/v1/chats/\(bob.id)/messages",
                token: ann.token,
                json: #"{"text": "Xylodelta 555 private", "photo_id": "\#(photo2)"}"#
            )
            XCTAssertEqual(second.status, 201, second.text)
            let toCy = try await client.send(.post, "/v1/chats/\(cy.id)/messages", token: bob.token, json: #"{"text": "Cyreply stays"}"#)
            XCTAssertEqual(toCy.status, 201, toCy.text)
            let deleted = try await client.send(.delete, "/v1/me", token: ann.token)
            XCTAssertEqual(deleted.status, 204, deleted.text)
            let afterDeletion = ["Min-Log-Position": deleted.header("Log-Position")!]
            // Her conversation leaves Bob's list; his other one stays readable.
            let bobsList = try await client.send(.get, "/v1/chats", token: bob.token, headers: afterDeletion)
            XCTAssertEqual(bobsList.items.map { $0["user_id"] as? String }, [cy.id], bobsList.text)
            let cysView = try await client.send(.get, "/v1/chats/\(bob.id)/messages", token: cy.token, headers: afterDeletion)
            XCTAssertEqual(cysView.items.map { $0["text"] as? String }, ["Cyreply stays"])
            XCTAssertError(try await client.send(.get, "/v1/chats/\(ann.id)/messages", token: bob.token), 404, "not_found")
            dump = try AccountDeletionTests.dump(client.ownerURL)
            for gone in ["Zebraquince", "Xylodelta", photo, photo2, photoBytes, photo2Bytes] {
                XCTAssertFalse(dump.contains(gone), "after the deletion the dump holds \(gone)")
            }
            XCTAssertTrue(dump.contains("Cyreply stays"), "the dump lost the other side's message")
            XCTAssertEqual(
                try client.sql(
                    "SELECT count(*) FROM message_keys WHERE sender = $1 AND sealed_key IS NOT NULL",
                    [UUID(uuidString: ann.id)!]
                ),
                [["0"]]
            )

            let reports = try Verifier(connectionString: client.runtimeURL, sealer: EventSealer(secret: fixture.configuration.secret)).run()
            XCTAssertFalse(reports.isEmpty)
            for report in reports { XCTAssertEqual(report.differingRows, 0, "\(report.table): \(report.samples)") }
        }
    }

    /// The stored idempotent answers of a message's send and edits show its text (sealed under
    /// the server's key): unsending deletes them, so not even the server secret reads the text
    /// afterwards, and a late retry of the send appends nothing and shows no text.
    func testUnsendDeletesTheStoredAnswersOfTheSendAndItsEdits() async throws {
        let fixture = try GatewayFixture("chat_idem_erasure")
        try await fixture.run { client in
            let ann = try await client.signUp("idann")
            let bob = try await client.signUp("idbob")
            try await client.makeMates(ann, bob)
            let send = #"{"text": "Gnuquartz 313 hidden"}"#
            let sent = try await client.send(
                .post,
                "/v1/chats/\(bob.id)/messages",
                token: ann.token,
                json: send,
                headers: ["Idempotency-Key": "send-1"]
            )
            XCTAssertEqual(sent.status, 201, sent.text)
            let id = try XCTUnwrap(sent.json["message_id"] as? String)
            XCTAssertNil(sent.header("SniffMeet-Erase-Answer-With"), "the internal header reached the client")
            let edited = try await client.send(
                .patch,
                "/v1/chats/\(bob.id)/messages/\(id)",
                token: ann.token,
                json: #"{"text": "Gnuquartz 414 edited"}"#,
                headers: ["Idempotency-Key": "edit-1"]
            )
            XCTAssertEqual(edited.status, 200, edited.text)
            // Another message's answer is not touched by this unsend.
            let other = try await client.send(
                .post,
                "/v1/chats/\(bob.id)/messages",
                token: ann.token,
                json: #"{"text": "Keptanswer 1"}"#,
                headers: ["Idempotency-Key": "send-2"]
            )
            XCTAssertEqual(other.status, 201, other.text)

            let pool = ConnectionPool(connectionString: client.runtimeURL)
            let store = IdempotencyStore(pool: pool, gate: .init(limit: 10), secret: fixture.configuration.secret)
            let scope = try XCTUnwrap(UUID(uuidString: ann.id))
            let before = try await store.lookup(scope: scope, key: "send-1")
            XCTAssertTrue(before?.answer.body.contains("Gnuquartz 313 hidden") == true, "the send's answer was not stored")
            let editBefore = try await store.lookup(scope: scope, key: "edit-1")
            XCTAssertTrue(editBefore?.answer.body.contains("Gnuquartz 414 edited") == true, "the edit's answer was not stored")

            let unsent = try await client.send(.delete, "/v1/chats/\(bob.id)/messages/\(id)", token: ann.token)
            XCTAssertEqual(unsent.status, 200, unsent.text)
            let sendAfter = try await store.lookup(scope: scope, key: "send-1")
            let editAfter = try await store.lookup(scope: scope, key: "edit-1")
            let otherAfter = try await store.lookup(scope: scope, key: "send-2")
            XCTAssertNil(sendAfter, "the send's answer outlived the unsend")
            XCTAssertNil(editAfter, "the edit's answer outlived the unsend")
            XCTAssertTrue(otherAfter?.answer.body.contains("Keptanswer 1") == true)
            let dump = try AccountDeletionTests.dump(client.ownerURL)
            XCTAssertFalse(dump.contains("Gnuquartz"), "after the unsend the dump holds the text")

            // A late retry of the send: nothing appended again, no text, nothing stored.
            let events = try client.sql("SELECT count(*) FROM events")[0][0]
            let retry = try await client.send(
                .post,
                "/v1/chats/\(bob.id)/messages",
                token: ann.token,
                json: send,
                headers: ["Idempotency-Key": "send-1"]
            )
            XCTAssertEqual(retry.status, 201, retry.text)
            XCTAssertEqual(retry.json["message_id"] as? String, id)
            XCTAssertTrue(retry.json["text"] is NSNull, retry.text)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0], events)
            let retried = try await store.lookup(scope: scope, key: "send-1")
            XCTAssertNil(retried, "the retry stored the answer of an unsent message")
            await pool.close()
        }
    }

    /// Uploads a chat photo; returns its id and a run of its stored bytes as pg_dump prints them (hex).
    static func photo(from: GatewayFixture.User, to: GatewayFixture.User, client: GatewayFixture.Client) async throws -> (String, String) {
        let upload = try await client.send(
            .post,
            "/v1/chats/\(to.id)/photos",
            token: from.token,
            body: try SyntheticPhoto.make(width: 640, height: 480, .jpeg()),
            headers: ["Content-Type": "image/jpeg"]
        )
        let id = try XCTUnwrap(upload.json["photo_id"] as? String, upload.text)
        let image = try await client.send(.get, "/v1/chats/\(to.id)/photos/\(id)", token: from.token)
        XCTAssertEqual(image.status, 200)
        let middle = image.body.dropFirst(image.body.count / 2).prefix(24)
        return (id, middle.map { String(format: "%02x", $0) }.joined())
    }
}
