import Foundation
import XCTest

final class MateRoutesTests: XCTestCase {
    func testRequestAcceptAndUnpair() async throws {
        try await GatewayFixture("mates").run { client in
            let a = try await client.signUp("anna")
            let b = try await client.signUp("ben")
            let drop = try await client.send(.post, "/v1/me/drop-tokens", token: b.token)
            let dropToken = drop.json["drop_token"] as! String

            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/mate-requests",
                    token: a.token,
                    json: #"{"to": "\#(a.id)", "drop_token": "\#(dropToken)"}"#
                ),
                400,
                "cannot_request_self"
            )
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/mate-requests",
                    token: a.token,
                    json: #"{"to": "\#(b.id)", "drop_token": "forged-token"}"#
                ),
                403,
                "invalid_drop_token"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/mate-requests", token: a.token, json: #"{"to": "nobody", "drop_token": "x"}"#),
                400,
                "validation_failed",
                field: "to"
            )

            let request = try await client.send(
                .post,
                "/v1/mate-requests",
                token: a.token,
                json: #"{"to": "\#(b.id)", "drop_token": "\#(dropToken)"}"#
            )
            XCTAssertEqual(request.status, 201, request.text)
            XCTAssertEqual(request.json["status"] as? String, "pending")
            XCTAssertEqual((request.json["from"] as? [String: Any])?["user_id"] as? String, a.id)
            XCTAssertEqual((request.json["to"] as? [String: Any])?["nickname"] as? String, "ben")
            XCTAssertNotNil(request.header("Log-Position"))
            let id = request.json["request_id"] as! String
            // Single use.
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/mate-requests",
                    token: a.token,
                    json: #"{"to": "\#(b.id)", "drop_token": "\#(dropToken)"}"#
                ),
                403,
                "invalid_drop_token"
            )

            XCTAssertError(try await client.send(.post, "/v1/mate-requests/\(id)/accept", token: a.token), 403, "not_addressee")
            XCTAssertError(try await client.send(.post, "/v1/mate-requests/\(id)/decline", token: a.token), 403, "not_addressee")
            XCTAssertError(try await client.send(.delete, "/v1/mate-requests/\(id)", token: b.token), 403, "not_requester")
            XCTAssertError(try await client.send(.post, "/v1/mate-requests/\(UUID())/accept", token: b.token), 404, "not_found")

            let accepted = try await client.send(.post, "/v1/mate-requests/\(id)/accept", token: b.token)
            XCTAssertEqual(accepted.status, 200, accepted.text)
            XCTAssertEqual(accepted.json["status"] as? String, "accepted")
            XCTAssertError(try await client.send(.post, "/v1/mate-requests/\(id)/accept", token: b.token), 409, "not_pending")
            XCTAssertError(try await client.send(.post, "/v1/mate-requests/\(id)/decline", token: b.token), 409, "not_pending")
            XCTAssertError(try await client.send(.delete, "/v1/mate-requests/\(id)", token: a.token), 409, "not_pending")

            let again = try await client.send(.post, "/v1/me/drop-tokens", token: b.token).json["drop_token"] as! String
            XCTAssertError(
                try await client.send(.post, "/v1/mate-requests", token: a.token, json: #"{"to": "\#(b.id)", "drop_token": "\#(again)"}"#),
                409,
                "already_mates"
            )

            let unpair = try await client.send(.delete, "/v1/me/mates/\(a.id)", token: b.token)
            XCTAssertEqual(unpair.status, 204, unpair.text)
            XCTAssertNotNil(unpair.header("Log-Position"))
            XCTAssertError(try await client.send(.delete, "/v1/me/mates/\(a.id)", token: b.token), 404, "not_mates")
            XCTAssertError(try await client.send(.delete, "/v1/me/mates/not-a-user", token: b.token), 404, "not_mates")
        }
    }

    func testMutualRequestAcceptsAndDeclineAndCancel() async throws {
        try await GatewayFixture("mutual").run { client in
            let a = try await client.signUp("amy")
            let b = try await client.signUp("bob")
            let c = try await client.signUp("cal")
            let dropB = try await client.send(.post, "/v1/me/drop-tokens", token: b.token).json["drop_token"] as! String
            let dropA = try await client.send(.post, "/v1/me/drop-tokens", token: a.token).json["drop_token"] as! String
            let first = try await client.send(
                .post,
                "/v1/mate-requests",
                token: a.token,
                json: #"{"to": "\#(b.id)", "drop_token": "\#(dropB)"}"#
            )
            XCTAssertEqual(first.status, 201)
            // b asks a back: that is a yes, 200 with the accepted request.
            let back = try await client.send(
                .post,
                "/v1/mate-requests",
                token: b.token,
                json: #"{"to": "\#(a.id)", "drop_token": "\#(dropA)"}"#
            )
            XCTAssertEqual(back.status, 200, back.text)
            XCTAssertEqual(back.json["status"] as? String, "accepted")
            XCTAssertEqual(back.json["request_id"] as? String, first.json["request_id"] as? String)

            // Decline and cancel between a and c.
            let dropC = try await client.send(.post, "/v1/me/drop-tokens", token: c.token).json["drop_token"] as! String
            let toC = try await client.send(
                .post,
                "/v1/mate-requests",
                token: a.token,
                json: #"{"to": "\#(c.id)", "drop_token": "\#(dropC)"}"#
            )
            let declined = try await client.send(.post, "/v1/mate-requests/\(toC.json["request_id"] as! String)/decline", token: c.token)
            XCTAssertEqual(declined.status, 200, declined.text)
            XCTAssertEqual(declined.json["status"] as? String, "declined")
            let dropC2 = try await client.send(.post, "/v1/me/drop-tokens", token: c.token).json["drop_token"] as! String
            let toC2 = try await client.send(
                .post,
                "/v1/mate-requests",
                token: a.token,
                json: #"{"to": "\#(c.id)", "drop_token": "\#(dropC2)"}"#
            )
            let cancelled = try await client.send(.delete, "/v1/mate-requests/\(toC2.json["request_id"] as! String)", token: a.token)
            XCTAssertEqual(cancelled.status, 200, cancelled.text)
            XCTAssertEqual(cancelled.json["status"] as? String, "cancelled")
        }
    }

    func testExpiredDropToken() async throws {
        try await GatewayFixture("expired").run { client in
            let a = try await client.signUp("ada")
            let b = try await client.signUp("bea")
            let drop = try await client.send(.post, "/v1/me/drop-tokens", token: b.token).json["drop_token"] as! String
            _ = try client.sql("UPDATE drop_tokens SET expires_at = now() - interval '1 minute'")
            XCTAssertError(
                try await client.send(.post, "/v1/mate-requests", token: a.token, json: #"{"to": "\#(b.id)", "drop_token": "\#(drop)"}"#),
                410,
                "drop_token_expired"
            )
        }
    }
}
