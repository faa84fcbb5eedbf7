import Foundation
import XCTest

final class IdempotencyTests: XCTestCase {
    func testSameKeySameBodyReplaysAndWritesNothing() async throws {
        try await GatewayFixture("idem").run { client in
            let a = try await client.signUp("idem"), b = try await client.signUp("potent")
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

            XCTAssertError(try await client.send(.post, "/v1/walks", token: a.token, json: WalkRoutesTests.walk(to: b, message: "Other"),
                                                 headers: ["Idempotency-Key": "walk-1"]), 422, "idempotency_key_reused")
            // Keys are per user: b's "walk-1" is b's own.
            let other = try await client.send(.post, "/v1/walks", token: b.token, json: WalkRoutesTests.walk(to: a),
                                              headers: ["Idempotency-Key": "walk-1"])
            XCTAssertEqual(other.status, 201, other.text)
            XCTAssertNotEqual(other.json["walk_id"] as? String, first.json["walk_id"] as? String)

            // A refusal is the answer too: replayed, not re-decided.
            let c = try await client.signUp("stranger")
            let refused = try await client.send(.post, "/v1/walks", token: a.token, json: WalkRoutesTests.walk(to: c), headers: ["Idempotency-Key": "r"])
            XCTAssertError(refused, 409, "not_mates")
            let refusedAgain = try await client.send(.post, "/v1/walks", token: a.token, json: WalkRoutesTests.walk(to: c), headers: ["Idempotency-Key": "r"])
            XCTAssertEqual(refusedAgain.text, refused.text)
        }
    }

    func testSignUpWithAKeyIsNotRepeated() async throws {
        try await GatewayFixture("idemsign").run { client in
            let body = """
                {"nickname": "once", "dog_name": "Bo", "age": 2, "sex": "male", "neutered": false, "size": "medium", "keywords": ["friendly"]}
                """
            let first = try await client.send(.post, "/v1/users", json: body, headers: ["Idempotency-Key": "signup-7f3a"])
            let second = try await client.send(.post, "/v1/users", json: body, headers: ["Idempotency-Key": "signup-7f3a"])
            XCTAssertEqual(first.status, 201, first.text)
            XCTAssertEqual(second.text, first.text)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM auth_tokens")[0][0], "1")
            // The stored answer holds the bearer token, so neither it nor the key is readable in the table.
            let token = try XCTUnwrap(first.json["token"] as? String)
            let stored = try client.sql("SELECT encode(key_hash, 'escape'), encode(sealed_body, 'escape') FROM idempotency_keys")
            XCTAssertEqual(stored.count, 1)
            for column in stored[0] {
                XCTAssertFalse(column?.contains(token) ?? true)
                XCTAssertFalse(column?.contains("signup-7f3a") ?? true)
                XCTAssertFalse(column?.contains("once") ?? true, "the profile is sealed too")
            }
        }
    }

    /// Two requests racing with one key: one command, one answer.
    func testConcurrentRetriesWriteOnce() async throws {
        try await GatewayFixture("race").run { client in
            let a = try await client.signUp("racer"), b = try await client.signUp("pacer")
            try await client.makeMates(a, b)
            let before = try client.sql("SELECT count(*) FROM events")[0][0].flatMap(Int.init)!
            let replies = try await withThrowingTaskGroup(of: GatewayFixture.Reply.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await client.send(.post, "/v1/walks", token: a.token, json: WalkRoutesTests.walk(to: b), headers: ["Idempotency-Key": "same"])
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
