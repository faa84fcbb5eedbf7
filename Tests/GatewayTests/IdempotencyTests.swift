import Foundation
import Gateway
import Postgres
import XCTest

final class IdempotencyTests: XCTestCase {
    func testCommandIDsAreTheOnesAlreadyInTheLogs() {
        // Computed by the first implementation (SHA-256 of the text, version 8): events already
        // appended carry ids derived from these, so a retry after an upgrade must get the same.
        XCTAssertEqual(
            IdempotencyStore.commandID(scope: IdempotencyStore.anonymous, key: "signup-1"),
            UUID(uuidString: "0dae0582-85b4-8498-8a57-5deabbec4c77")
        )
        XCTAssertEqual(
            IdempotencyStore.commandID(scope: UUID(uuidString: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b")!, key: "mia-asks-leo-1"),
            UUID(uuidString: "572d4703-ae27-82ec-9352-5d003cfd7823")
        )
    }

    func testSameKeySameBodyReplaysAndWritesNothing() async throws {
        try await GatewayFixture("idem").run { client in
            let a = try await client.signUp("idem")
            let b = try await client.signUp("potent")
            try await client.makeMates(a, b)
            let body = WalkRoutesTests.walk(to: b)
            let first = try await client.send(.post, "/v1/walks", token: a.token, json: body, headers: ["Idempotency-Key": "walk-1"])
            XCTAssertEqual(first.status, 201, first.text)
            let events = try client.sql("SELECT count(*) FROM events")[0][0]
            let second = try await client.send(.post, "/v1/walks", token: a.token, json: body, headers: ["Idempotency-Key": "walk-1"])
            XCTAssertEqual(second.status, 201)
            XCTAssertEqual(second.text, first.text)
            XCTAssertEqual(second.header("Log-Position"), first.header("Log-Position"))
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0], events)

            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/walks",
                    token: a.token,
                    json: WalkRoutesTests.walk(to: b, message: "Other"),
                    headers: ["Idempotency-Key": "walk-1"]
                ),
                422,
                "idempotency_key_reused"
            )
            // Keys are per user: b's "walk-1" is b's own.
            let other = try await client.send(
                .post,
                "/v1/walks",
                token: b.token,
                json: WalkRoutesTests.walk(to: a),
                headers: ["Idempotency-Key": "walk-1"]
            )
            XCTAssertEqual(other.status, 201, other.text)
            XCTAssertNotEqual(other.json["walk_id"] as? String, first.json["walk_id"] as? String)

            // A refusal is the answer too: replayed, not re-decided.
            let c = try await client.signUp("stranger")
            let refused = try await client.send(
                .post,
                "/v1/walks",
                token: a.token,
                json: WalkRoutesTests.walk(to: c),
                headers: ["Idempotency-Key": "r"]
            )
            XCTAssertError(refused, 409, "not_mates")
            let refusedAgain = try await client.send(
                .post,
                "/v1/walks",
                token: a.token,
                json: WalkRoutesTests.walk(to: c),
                headers: ["Idempotency-Key": "r"]
            )
            XCTAssertEqual(refusedAgain.text, refused.text)
        }
    }

    func testRepeatedSignUpNeverShowsTheTokenAgain() async throws {
        try await GatewayFixture("idemsign").run { client in
            let body = """
                {"nickname": "once", "dog_name": "Bo", "age": 2, "sex": "male", "neutered": false, "size": "medium", "keywords": ["friendly"]}
                """
            let first = try await client.send(.post, "/v1/users", json: body, headers: ["Idempotency-Key": "signup-7f3a"])
            XCTAssertEqual(first.status, 201, first.text)
            let token = try XCTUnwrap(first.json["token"] as? String)
            // Anyone repeating the request (same key, same body) learns nothing: no token, no user id.
            let second = try await client.send(.post, "/v1/users", json: body, headers: ["Idempotency-Key": "signup-7f3a"])
            XCTAssertError(second, 409, "already_registered")
            XCTAssertFalse(second.text.contains(token))
            XCTAssertFalse(second.text.contains(first.json["user_id"] as? String ?? "-"))
            XCTAssertEqual(try client.sql("SELECT count(*) FROM sessions")[0][0], "1")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events WHERE event_type = 'user_registered'")[0][0], "1")
            // The table holds neither the key nor the answer readably.
            let stored = try client.sql("SELECT encode(key_hash, 'escape'), encode(sealed_body, 'escape') FROM idempotency_keys")
            XCTAssertEqual(stored.count, 1)
            for column in stored[0] {
                XCTAssertFalse(column?.contains(token) ?? true)
                XCTAssertFalse(column?.contains("signup-7f3a") ?? true)
                XCTAssertFalse(column?.contains("already_registered") ?? true, "the stored answer is sealed")
            }
        }
    }

    /// An anonymous key is scoped to the client (its address) and its request: another client's
    /// sign-up with the same key is neither replayed nor refused, nor given the first one's
    /// command id; the same client repeating is still `409 already_registered`.
    func testSignUpKeysAreScopedPerClient() async throws {
        try await GatewayFixture("idemclients") { $0.trustForwardedFor = true }.run { client in
            func signUp(_ nickname: String, from address: String) async throws -> GatewayFixture.Reply {
                try await client.send(
                    .post,
                    "/v1/users",
                    json: HostileInputTests.signUp(nickname: nickname),
                    headers: ["Idempotency-Key": "signup-1", "X-Forwarded-For": address]
                )
            }
            let first = try await signUp("phone1", from: "198.51.100.1")
            XCTAssertEqual(first.status, 201, first.text)
            // Another client, same key, another sign-up: its own account.
            let second = try await signUp("phone2", from: "198.51.100.2")
            XCTAssertEqual(second.status, 201, second.text)
            XCTAssertNotEqual(second.json["user_id"] as? String, first.json["user_id"] as? String)
            // Two phones behind one address (carrier NAT) with the same key: apart by their bodies.
            let third = try await signUp("phone3", from: "198.51.100.2")
            XCTAssertEqual(third.status, 201, third.text)
            // Another client sending the first one's exact request is a sign-up of its own, refused
            // by the nickname, not told that the first one's succeeded.
            let copied = try await signUp("phone1", from: "198.51.100.3")
            XCTAssertError(copied, 409, "nickname_taken")
            // The first client repeating: already registered, as documented.
            let again = try await signUp("phone1", from: "198.51.100.1")
            XCTAssertError(again, 409, "already_registered")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events WHERE event_type = 'user_registered'")[0][0], "3")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM sessions")[0][0], "3")
        }
    }

    /// Sign-in with a transfer code is anonymous too: two clients with the same key and their own
    /// codes both get sessions.
    func testSignInKeysAreScopedPerClient() async throws {
        try await GatewayFixture("idemsignin") { $0.trustForwardedFor = true }.run { client in
            let a = try await client.signUp("movera")
            let b = try await client.signUp("moverb")
            for (user, address) in [(a, "203.0.113.1"), (b, "203.0.113.2")] {
                let code = try await client.send(.post, "/v1/me/transfer-codes", token: user.token).json["transfer_code"] as! String
                let session = try await client.send(
                    .post,
                    "/v1/sessions",
                    json: #"{"transfer_code": "\#(code)"}"#,
                    headers: ["Idempotency-Key": "signin", "X-Forwarded-For": address]
                )
                XCTAssertEqual(session.status, 201, session.text)
                XCTAssertNotNil(session.json["token"] as? String, session.text)
                XCTAssertEqual(try client.sql("SELECT count(*) FROM sessions WHERE user_id = '\(user.id)'")[0][0], "2")
            }
        }
    }

    /// The stored key is an HMAC under the server secret: another server secret cannot find or
    /// open the rows, and hashing guessed keys with plain SHA-256 does not match them.
    func testStoredKeysAreKeyedAndAnswersSealedUnderTheServerSecret() async throws {
        try await GatewayFixture("idemkey").run { client in
            let a = try await client.signUp("keyed")
            let drop = try await client.send(.post, "/v1/me/drop-tokens", token: a.token, headers: ["Idempotency-Key": "k1"])
            XCTAssertEqual(drop.status, 201, drop.text)
            let dropToken = try XCTUnwrap(drop.json["drop_token"] as? String)
            let guessed = try client.sql("SELECT count(*) FROM idempotency_keys WHERE key_hash = sha256('k1'::bytea)")
            XCTAssertEqual(guessed[0][0], "0")
            let sealed = try client.sql("SELECT encode(sealed_body, 'escape') FROM idempotency_keys")
            XCTAssertFalse(sealed.contains { $0[0]?.contains(dropToken) ?? true })
            // The same key again gives the same drop token (the answer opens with the server's secret).
            let again = try await client.send(.post, "/v1/me/drop-tokens", token: a.token, headers: ["Idempotency-Key": "k1"])
            XCTAssertEqual(again.json["drop_token"] as? String, dropToken)
        }
    }

    /// A repeat is answered from the store and never reaches the route: issuing a drop token
    /// writes a row outside the log, so a second run would show as a second row.
    func testStoredAnswerReplaysWithoutRunningTheRouteAgain() async throws {
        try await GatewayFixture("idemroute").run { client in
            let a = try await client.signUp("once")
            let b = try await client.signUp("twice")
            try await client.makeMates(a, b)
            let dropTokens = try client.sql("SELECT count(*) FROM drop_tokens")[0][0].flatMap(Int.init)!
            let first = try await client.send(.post, "/v1/me/drop-tokens", token: a.token, headers: ["Idempotency-Key": "d1"])
            XCTAssertEqual(first.status, 201, first.text)
            let again = try await client.send(.post, "/v1/me/drop-tokens", token: a.token, headers: ["Idempotency-Key": "d1"])
            XCTAssertEqual(again.text, first.text)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM drop_tokens")[0][0].flatMap(Int.init)!, dropTokens + 1)

            // A command's answer: the same bytes and headers, and no event or stored answer more.
            let walk = try await client.send(
                .post,
                "/v1/walks",
                token: a.token,
                json: WalkRoutesTests.walk(to: b),
                headers: ["Idempotency-Key": "w1"]
            )
            XCTAssertEqual(walk.status, 201, walk.text)
            let events = try client.sql("SELECT count(*) FROM events")[0][0]
            let stored = try client.sql("SELECT count(*) FROM idempotency_keys")[0][0]
            let replay = try await client.send(
                .post,
                "/v1/walks",
                token: a.token,
                json: WalkRoutesTests.walk(to: b),
                headers: ["Idempotency-Key": "w1"]
            )
            XCTAssertEqual(replay.status, 201)
            XCTAssertEqual(replay.body, walk.body)
            XCTAssertEqual(replay.header("Content-Type"), "application/json; charset=utf-8")
            XCTAssertEqual(replay.header("Log-Position"), walk.header("Log-Position"))
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0], events)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM idempotency_keys")[0][0], stored)

            // 204 answers replay as 204 with their Log-Position.
            let unpaired = try await client.send(.delete, "/v1/me/mates/\(b.id)", token: a.token, headers: ["Idempotency-Key": "u1"])
            XCTAssertEqual(unpaired.status, 204, unpaired.text)
            let unpairedAgain = try await client.send(.delete, "/v1/me/mates/\(b.id)", token: a.token, headers: ["Idempotency-Key": "u1"])
            XCTAssertEqual(unpairedAgain.status, 204, unpairedAgain.text)
            XCTAssertEqual(unpairedAgain.header("Log-Position"), unpaired.header("Log-Position"))
        }
    }

    /// A request that could not be read (bad JSON, a missing field) ran no command, so its
    /// answer is not stored: the corrected request may use the same key.
    func testUnreadableRequestIsNotStoredUnderItsKey() async throws {
        try await GatewayFixture("idembad").run { client in
            let a = try await client.signUp("fixer")
            let b = try await client.signUp("fixed")
            try await client.makeMates(a, b)
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/walks",
                    token: a.token,
                    json: #"{"to": "\#(b.id)"}"#,
                    headers: ["Idempotency-Key": "fix-1"]
                ),
                400,
                "validation_failed"
            )
            XCTAssertEqual(try client.sql("SELECT count(*) FROM idempotency_keys WHERE scope = $1", [UUID(uuidString: a.id)!])[0][0], "0")
            let fixed = try await client.send(
                .post,
                "/v1/walks",
                token: a.token,
                json: WalkRoutesTests.walk(to: b),
                headers: ["Idempotency-Key": "fix-1"]
            )
            XCTAssertEqual(fixed.status, 201, fixed.text)
        }
    }

    /// Answers older than 24 hours are neither served nor kept.
    func testExpiredAnswersArePurgedAndNotServed() async throws {
        try await GatewayFixture("idempurge").run { client in
            let a = try await client.signUp("purged")
            let first = try await client.send(.post, "/v1/me/drop-tokens", token: a.token, headers: ["Idempotency-Key": "old"])
            _ = try client.sql("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'")
            let later = try await client.send(.post, "/v1/me/drop-tokens", token: a.token, headers: ["Idempotency-Key": "old"])
            XCTAssertEqual(later.status, 201, later.text)
            XCTAssertNotEqual(later.json["drop_token"] as? String, first.json["drop_token"] as? String, "an expired answer is not replayed")
            _ = try client.sql("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'")
            let pool = ConnectionPool(connectionString: client.runtimeURL)
            let purged = try await IdempotencyStore(pool: pool, gate: .init(limit: 10), secret: .init(size: .bits256)).purge()
            await pool.close()
            XCTAssertEqual(purged, 1)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM idempotency_keys")[0][0], "0")
        }
    }

    /// Two requests racing with one key: one command, one answer.
    func testConcurrentRetriesWriteOnce() async throws {
        try await GatewayFixture("race").run { client in
            let a = try await client.signUp("racer")
            let b = try await client.signUp("pacer")
            try await client.makeMates(a, b)
            let before = try client.sql("SELECT count(*) FROM events")[0][0].flatMap(Int.init)!
            let replies = try await withThrowingTaskGroup(of: GatewayFixture.Reply.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await client.send(
                            .post,
                            "/v1/walks",
                            token: a.token,
                            json: WalkRoutesTests.walk(to: b),
                            headers: ["Idempotency-Key": "same"]
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(Set(replies.map(\.status)), [201], replies.map(\.text).joined(separator: "\n"))
            XCTAssertEqual(Set(replies.compactMap { $0.json["walk_id"] as? String }).count, 1)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0].flatMap(Int.init)!, before + 1)
        }
    }
}
