import Foundation
import XCTest

final class WalkRoutesTests: XCTestCase {
    static func walk(to user: GatewayFixture.User, message: String = "Park at 5?") -> String {
        #"{"to": "\#(user.id)", "message": "\#(message)", "latitude": 37.5665, "longitude": 126.978, "place_name": "Seoul Forest"}"#
    }

    func testSendRespondAndCancel() async throws {
        try await GatewayFixture("walks").run { client in
            let a = try await client.signUp("walker")
            let b = try await client.signUp("buddy")
            let c = try await client.signUp("carl")
            XCTAssertError(try await client.send(.post, "/v1/walks", token: a.token, json: Self.walk(to: b)), 409, "not_mates")
            try await client.makeMates(a, b)
            XCTAssertError(
                try await client.send(.post, "/v1/walks", token: a.token, json: Self.walk(to: b, message: "")),
                400,
                "validation_failed",
                field: "message"
            )
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/walks",
                    token: a.token,
                    json: #"{"to": "\#(b.id)", "message": "hi", "latitude": 91, "longitude": 0}"#
                ),
                400,
                "validation_failed",
                field: "latitude"
            )
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/walks",
                    token: a.token,
                    json: #"{"to": "\#(b.id)", "message": "hi", "latitude": 0, "longitude": -180.5}"#
                ),
                400,
                "validation_failed",
                field: "longitude"
            )

            let sent = try await client.send(.post, "/v1/walks", token: a.token, json: Self.walk(to: b))
            XCTAssertEqual(sent.status, 201, sent.text)
            XCTAssertEqual(sent.json["status"] as? String, "pending")
            XCTAssertEqual(sent.json["place_name"] as? String, "Seoul Forest")
            XCTAssertTrue(sent.json["answered_at"] is NSNull)
            XCTAssertNotNil(sent.json["expires_at"] as? String)
            XCTAssertNotNil(sent.header("Log-Position"))
            let id = sent.json["walk_id"] as! String

            XCTAssertError(
                try await client.send(.post, "/v1/walks/\(id)/response", token: a.token, json: #"{"answer": "accept"}"#),
                403,
                "not_addressee"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/walks/\(id)/response", token: c.token, json: #"{"answer": "accept"}"#),
                403,
                "not_addressee"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/walks/\(id)/response", token: b.token, json: #"{"answer": "maybe"}"#),
                400,
                "validation_failed",
                field: "answer"
            )
            XCTAssertError(try await client.send(.delete, "/v1/walks/\(id)", token: b.token), 403, "not_sender")

            let accepted = try await client.send(.post, "/v1/walks/\(id)/response", token: b.token, json: #"{"answer": "accept"}"#)
            XCTAssertEqual(accepted.status, 200, accepted.text)
            XCTAssertEqual(accepted.json["status"] as? String, "accepted")
            XCTAssertNotNil(accepted.json["answered_at"] as? String)
            // Same answer again: a no-op, still 200. A different answer: refused.
            let again = try await client.send(.post, "/v1/walks/\(id)/response", token: b.token, json: #"{"answer": "accept"}"#)
            XCTAssertEqual(again.status, 200, again.text)
            XCTAssertNotNil(again.header("Log-Position"))
            XCTAssertError(
                try await client.send(.post, "/v1/walks/\(id)/response", token: b.token, json: #"{"answer": "decline"}"#),
                409,
                "already_answered"
            )
            let cancelAnswered = try await client.send(.delete, "/v1/walks/\(id)", token: a.token)
            XCTAssertEqual(cancelAnswered.status, 409, cancelAnswered.text)

            let second = try await client.send(.post, "/v1/walks", token: a.token, json: Self.walk(to: b)).json["walk_id"] as! String
            let cancelled = try await client.send(.delete, "/v1/walks/\(second)", token: a.token)
            XCTAssertEqual(cancelled.status, 200, cancelled.text)
            XCTAssertEqual(cancelled.json["status"] as? String, "cancelled")
            XCTAssertError(
                try await client.send(.post, "/v1/walks/\(UUID())/response", token: b.token, json: #"{"answer": "accept"}"#),
                404,
                "not_found"
            )
        }
    }

    func testAnswerAfterTheDeadlineIsRefused() async throws {
        try await GatewayFixture("deadline") { $0.walkTTL = 1 }.run { client in
            let a = try await client.signUp("late")
            let b = try await client.signUp("later")
            try await client.makeMates(a, b)
            let sent = try await client.send(.post, "/v1/walks", token: a.token, json: Self.walk(to: b))
            XCTAssertEqual(sent.status, 201, sent.text)
            try await Task.sleep(for: .milliseconds(1100))
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/walks/\(sent.json["walk_id"] as! String)/response",
                    token: b.token,
                    json: #"{"answer": "accept"}"#
                ),
                410,
                "walk_expired"
            )
        }
    }
}
