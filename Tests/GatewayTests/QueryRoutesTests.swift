import Domain
import Foundation
import Gateway
import XCTest

/// The read side: every query route's answer after the commands it reflects, read-your-writes,
/// pagination.
final class QueryRoutesTests: XCTestCase {
    func testReadYourWritesAcrossEveryQuery() async throws {
        try await GatewayFixture("queries").run { client in
            let a = try await client.signUp("reader", dog: "Rex")
            let b = try await client.signUp("writer", dog: "Max")
            try await client.makeMates(a, b)
            let walk = try await client.send(.post, "/v1/walks", token: a.token, json: WalkRoutesTests.walk(to: b))
            let position = try XCTUnwrap(walk.header("Log-Position"))
            let walkID = walk.json["walk_id"] as! String
            let seen = ["Min-Log-Position": position]

            let me = try await client.send(.get, "/v1/me", token: a.token, headers: seen)
            XCTAssertEqual(me.status, 200, me.text)
            XCTAssertEqual(me.json["nickname"] as? String, "reader")
            XCTAssertEqual(me.json["user_id"] as? String, a.id)
            XCTAssertNotNil(me.json["created_at"] as? String)

            let card = try await client.send(.get, "/v1/users/\(b.id)", token: a.token, headers: seen)
            XCTAssertEqual(card.status, 200, card.text)
            XCTAssertEqual(card.json["dog_name"] as? String, "Max")
            XCTAssertNil(card.json["created_at"], "a card has no created_at")

            let mates = try await client.send(.get, "/v1/me/mates", token: a.token, headers: seen)
            XCTAssertEqual(mates.status, 200, mates.text)
            XCTAssertEqual(mates.items.map { $0["user_id"] as? String }, [b.id])
            XCTAssertNotNil(mates.items.first?["mates_since"] as? String)
            XCTAssertTrue(mates.json["next_cursor"] is NSNull)

            let outgoing = try await client.send(.get, "/v1/me/mate-requests?direction=outgoing", token: a.token, headers: seen)
            XCTAssertEqual(outgoing.items.count, 1, outgoing.text)
            XCTAssertEqual(outgoing.items.first?["status"] as? String, "accepted")
            XCTAssertEqual((outgoing.items.first?["to"] as? [String: Any])?["user_id"] as? String, b.id)
            let incoming = try await client.send(.get, "/v1/me/mate-requests?direction=incoming", token: a.token, headers: seen)
            XCTAssertEqual(incoming.items.count, 0, incoming.text)
            let pending = try await client.send(.get, "/v1/me/mate-requests?status=pending", token: b.token, headers: seen)
            XCTAssertEqual(pending.items.count, 0, pending.text)

            let one = try await client.send(.get, "/v1/walks/\(walkID)", token: b.token, headers: seen)
            XCTAssertEqual(one.status, 200, one.text)
            XCTAssertEqual(one.json["message"] as? String, "Park at 5?")
            XCTAssertEqual(one.json["status"] as? String, "pending")
            let incomingWalks = try await client.send(.get, "/v1/me/walks?direction=incoming&status=pending", token: b.token, headers: seen)
            XCTAssertEqual(incomingWalks.items.map { $0["walk_id"] as? String }, [walkID])
            let outgoingOfB = try await client.send(.get, "/v1/me/walks?direction=outgoing", token: b.token, headers: seen)
            XCTAssertEqual(outgoingOfB.items.count, 0)

            let inbox = try await client.send(.get, "/v1/me/notifications", token: b.token, headers: seen)
            XCTAssertEqual(inbox.status, 200, inbox.text)
            XCTAssertEqual(inbox.items.map { $0["category"] as? String }, ["walk_requested", "mate_requested"])
            let newest = inbox.items[0]
            XCTAssertEqual(newest["walk_id"] as? String, walkID)
            XCTAssertEqual(newest["latitude"] as? Double, 37.5665)
            XCTAssertEqual((newest["from"] as? [String: Any])?["dog_name"] as? String, "Rex")
            XCTAssertEqual(inbox.items[1]["request_id"] as? String != nil, true)

            // Dismissing is a command: the entry is gone once the read model includes it.
            let id = newest["notification_id"] as! String
            let dismissed = try await client.send(.delete, "/v1/me/notifications/\(id)", token: b.token)
            XCTAssertEqual(dismissed.status, 204, dismissed.text)
            let after = try await client.send(
                .get,
                "/v1/me/notifications",
                token: b.token,
                headers: ["Min-Log-Position": dismissed.header("Log-Position")!]
            )
            XCTAssertEqual(after.items.map { $0["category"] as? String }, ["mate_requested"])
            XCTAssertError(try await client.send(.delete, "/v1/me/notifications/\(id)", token: b.token), 404, "not_found")

            // The answer is shown accepted once projected.
            let answered = try await client.send(.post, "/v1/walks/\(walkID)/response", token: b.token, json: #"{"answer": "accept"}"#)
            let accepted = try await client.send(
                .get,
                "/v1/me/notifications",
                token: a.token,
                headers: ["Min-Log-Position": answered.header("Log-Position")!]
            )
            XCTAssertEqual(accepted.items.first?["category"] as? String, "walk_accepted", accepted.text)
            let acceptedWalk = try await client.send(
                .get,
                "/v1/walks/\(walkID)",
                token: a.token,
                headers: ["Min-Log-Position": answered.header("Log-Position")!]
            )
            XCTAssertEqual(acceptedWalk.json["status"] as? String, "accepted")
        }
    }

    /// Without projectors running, a real position is never reached: 503 after the wait.
    /// Cards on list pages are the profiles read model's stored text (rendered in SQL by
    /// `profile_card()`); cards in command answers are written by the gateway. Both must be the
    /// same bytes, also for text that needs escaping or is not ASCII.
    func testStoredCardsAreTheBytesTheGatewayWrites() async throws {
        try await GatewayFixture("stored-cards").run { client in
            let a = try await client.signUp(#"Bo\"x\\"#, dog: #"보리 \"🐕\" \\ é"#)
            let b = try await client.signUp("plain", dog: "Max")
            try await client.makeMates(a, b)
            let changed = try await client.send(.patch, "/v1/me", token: a.token, json: #"{"profile_image": null, "age": 12}"#)
            XCTAssertEqual(changed.status, 200, changed.text)
            let seen = ["Min-Log-Position": try XCTUnwrap(changed.header("Log-Position"))]
            let profile = DogProfile(
                nickname: #"Bo"x\"#,
                dogName: #"보리 "🐕" \ é"#,
                age: 12,
                sex: .female,
                neutered: true,
                size: .small,
                keywords: [.smart, .shy],
                profileImage: nil
            )
            let written = CardJSON(userID: try XCTUnwrap(UUID(uuidString: a.id)), profile: profile).json
            let card = try await client.send(.get, "/v1/users/\(a.id)", token: b.token, headers: seen)
            XCTAssertEqual(card.status, 200, card.text)
            XCTAssertEqual(card.text, String(decoding: written, as: UTF8.self), "the card route answers the stored card as it is")
            let mates = try await client.send(.get, "/v1/me/mates", token: b.token, headers: seen)
            XCTAssertEqual(mates.status, 200, mates.text)
            let inner = String(decoding: written.dropFirst().dropLast(), as: UTF8.self)
            XCTAssertTrue(mates.text.contains("{" + inner + ",\"mates_since\":"), mates.text)
        }
    }

    func testNotCaughtUpAfterTheWait() async throws {
        try await GatewayFixture("caughtup", background: []) { $0.readYourWritesTimeout = .milliseconds(300) }.run { client in
            let signUp = try await client.send(
                .post,
                "/v1/users",
                json: """
                    {"nickname": "waiter", "dog_name": "Bo", "age": 2, "sex": "male", "neutered": false, "size": "small", "keywords": ["shy"]}
                    """
            )
            let token = signUp.json["token"] as! String
            let start = ContinuousClock.now
            let reply = try await client.send(.get, "/v1/me", token: token, headers: ["Min-Log-Position": signUp.header("Log-Position")!])
            XCTAssertError(reply, 503, "not_caught_up")
            XCTAssertEqual(reply.header("Retry-After"), "1")
            XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(250))
            // A position no command gave out is refused at once rather than waited for.
            XCTAssertError(
                try await client.send(.get, "/v1/me", token: token, headers: ["Min-Log-Position": "999999999.999999999"]),
                400,
                "validation_failed",
                field: "Min-Log-Position"
            )
        }
    }

    func testPagesAreNewestFirstAndComplete() async throws {
        try await GatewayFixture("pages").run { client in
            let a = try await client.signUp("pager")
            let b = try await client.signUp("paged")
            try await client.makeMates(a, b)
            var sent: [String] = []
            var position = ""
            for index in 0..<7 {
                let walk = try await client.send(
                    .post,
                    "/v1/walks",
                    token: a.token,
                    json: WalkRoutesTests.walk(to: b, message: "walk \(index)")
                )
                sent.append(walk.json["walk_id"] as! String)
                position = walk.header("Log-Position")!
            }
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let query = "/v1/me/walks?limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await client.send(.get, query, token: a.token, headers: ["Min-Log-Position": position])
                XCTAssertEqual(page.status, 200, page.text)
                XCTAssertLessThanOrEqual(page.items.count, 3)
                seen += page.items.compactMap { $0["walk_id"] as? String }
                cursor = page.json["next_cursor"] as? String
                pages += 1
            } while cursor != nil && pages < 10
            XCTAssertEqual(seen, sent.reversed(), "every walk once, newest first")
            XCTAssertEqual(pages, 3)
            let defaultPage = try await client.send(.get, "/v1/me/notifications", token: b.token, headers: ["Min-Log-Position": position])
            XCTAssertEqual(defaultPage.items.count, 8)
            let small = try await client.send(.get, "/v1/me/notifications?limit=5", token: b.token)
            let rest = try await client.send(
                .get,
                "/v1/me/notifications?limit=5&cursor=\(small.json["next_cursor"] as! String)",
                token: b.token
            )
            XCTAssertEqual(small.items.count + rest.items.count, 8)
            XCTAssertTrue(rest.json["next_cursor"] is NSNull)
            XCTAssertEqual(Set((small.items + rest.items).compactMap { $0["notification_id"] as? String }).count, 8)
        }
    }
}
