import Foundation
import XCTest

/// Whatever a client sends, the answer is a JSON error with a stable code, never a 5xx.
final class ErrorAnswerTests: XCTestCase {
    func testRouterMissesAndBadBodies() async throws {
        try await GatewayFixture("errors").run { client in
            XCTAssertError(try await client.send(.get, "/v1/nothing-here"), 404, "not_found")
            let wrongMethod = try await client.send(.put, "/v1/users", json: "{}")
            XCTAssertEqual(wrongMethod.status, 405, wrongMethod.text)
            XCTAssertEqual(wrongMethod.header("Allow"), "POST")
            XCTAssertEqual(wrongMethod.code, "method_not_allowed")
            // A path with a parameter: every method of the matching template, and only those.
            let wrongOnWalk = try await client.send(.put, "/v1/walks/\(UUID())")
            XCTAssertEqual(wrongOnWalk.status, 405, wrongOnWalk.text)
            XCTAssertEqual(wrongOnWalk.header("Allow"), "DELETE, GET")
            XCTAssertError(try await client.send(.put, "/v1/walks/\(UUID())/nothing"), 404, "not_found")

            XCTAssertError(try await client.send(.post, "/v1/users", json: "{not json"), 400, "invalid_json")
            XCTAssertError(try await client.send(.post, "/v1/users", json: ""), 400, "invalid_json")
            let tooLarge = String(repeating: "a", count: 16 * 1024 + 1)
            XCTAssertError(try await client.send(.post, "/v1/users", json: #"{"nickname": "\#(tooLarge)"}"#), 413, "body_too_large")

            let valid = [
                "nickname": "\"okay\"", "dog_name": "\"Bori\"", "age": "3", "sex": "\"male\"", "neutered": "false",
                "size": "\"small\"", "keywords": "[\"smart\"]",
            ]
            func body(_ changes: [String: String?]) -> String {
                var fields = valid
                for (key, value) in changes { fields[key] = value }
                return "{" + fields.compactMap { key, value in "\"\(key)\": \(value)" }.sorted().joined(separator: ", ") + "}"
            }
            let cases: [([String: String?], String)] = [
                (["nickname": "\"a\""], "nickname"), (["nickname": "\"waytoolong\""], "nickname"),
                (["dog_name": "\"\""], "dog_name"), (["age": "100"], "age"), (["age": "-1"], "age"), (["age": "\"3\""], "age"),
                (["sex": "\"other\""], "sex"), (["size": "\"huge\""], "size"), (["keywords": "[]"], "keywords"),
                (["keywords": "[\"smart\", \"smart\"]"], "keywords"), (["keywords": "[\"smart\", \"shy\", \"friendly\"]"], "keywords"),
                (["keywords": "[\"lazy\"]"], "keywords"), (["neutered": "null"], "neutered"), (["dog_name": nil], "dog_name"),
            ]
            for (change, field) in cases {
                let reply = try await client.send(.post, "/v1/users", json: body(change))
                XCTAssertError(reply, 400, "validation_failed", field: field)
            }
            XCTAssertError(try await client.send(.post, "/v1/users", json: "[1, 2]"), 400, "validation_failed")
        }
    }

    func testAuthErrorsAndBadParameters() async throws {
        try await GatewayFixture("params").run { client in
            XCTAssertError(try await client.send(.get, "/v1/me"), 401, "unauthorized")
            XCTAssertError(try await client.send(.get, "/v1/me", token: "not-a-real-token-but-long-enough-to-look"), 401, "unauthorized")
            XCTAssertError(try await client.send(.get, "/v1/me", headers: ["Authorization": "Basic abc"]), 401, "unauthorized")
            let user = try await client.signUp("params")
            XCTAssertError(try await client.send(.get, "/v1/me/walks?limit=0", token: user.token), 400, "validation_failed", field: "limit")
            XCTAssertError(
                try await client.send(.get, "/v1/me/walks?limit=101", token: user.token),
                400,
                "validation_failed",
                field: "limit"
            )
            XCTAssertError(
                try await client.send(.get, "/v1/me/walks?cursor=%%%", token: user.token),
                400,
                "validation_failed",
                field: "cursor"
            )
            XCTAssertError(
                try await client.send(.get, "/v1/me/walks?cursor=YXxi", token: user.token),
                400,
                "validation_failed",
                field: "cursor"
            )
            XCTAssertError(
                try await client.send(.get, "/v1/me/walks?direction=sideways", token: user.token),
                400,
                "validation_failed",
                field: "direction"
            )
            XCTAssertError(
                try await client.send(.get, "/v1/me/mate-requests?status=maybe", token: user.token),
                400,
                "validation_failed",
                field: "status"
            )
            XCTAssertError(try await client.send(.get, "/v1/walks/not-a-uuid", token: user.token), 404, "not_found")
            XCTAssertError(
                try await client.send(.get, "/v1/me", token: user.token, headers: ["Min-Log-Position": "soon"]),
                400,
                "validation_failed",
                field: "Min-Log-Position"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/me/drop-tokens", token: user.token, headers: ["Idempotency-Key": "has space"]),
                400,
                "validation_failed",
                field: "Idempotency-Key"
            )
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/me/drop-tokens",
                    token: user.token,
                    headers: ["Idempotency-Key": String(repeating: "k", count: 201)]
                ),
                400,
                "validation_failed",
                field: "Idempotency-Key"
            )
        }
    }
}
