import Foundation
import XCTest

@testable import Gateway

/// Overload answers fast, slow requests time out, expired walks show as expired.
final class LimitsTests: XCTestCase {
    /// Past its limit the gate refuses at once instead of queueing.
    func testDatabaseGateRefusesPastItsLimit() async throws {
        let gate = DatabaseGate(limit: 1)
        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await gate.admitted {
                enteredContinuation.yield()
                for await _ in release { break }
                return 1
            }
        }
        for await _ in entered { break }
        // The holder is released only after this refusal: a gate that queued instead would never
        // answer here (the test would hang, not pass).
        do {
            _ = try await gate.admitted { 2 }
            XCTFail("a second request was admitted past the limit")
        } catch let error as APIError {
            XCTAssertEqual(error.code, "overloaded")
            XCTAssertEqual(error.status.code, 503)
        }
        XCTAssertEqual(gate.current, 1, "refused while the holder still holds its place")
        releaseContinuation.yield()
        let held = try await holder.value
        XCTAssertEqual(held, 1)
        XCTAssertEqual(gate.current, 0)
        let after = try await gate.admitted { 3 }
        XCTAssertEqual(after, 3)
    }

    func testSlowRequestsTimeOut() async throws {
        try await GatewayFixture("timeout", background: []) { $0.requestTimeout = .milliseconds(300) }.run { client in
            let signUp = try await client.send(
                .post,
                "/v1/users",
                json: """
                    {"nickname": "slowpoke", "dog_name": "Bo", "age": 2, "sex": "male", "neutered": false, "size": "small", "keywords": ["shy"]}
                    """
            )
            let start = ContinuousClock.now
            // The read models never reach it (no projectors): the 3 s wait is cut by the timeout.
            let reply = try await client.send(
                .get,
                "/v1/me",
                token: signUp.json["token"] as? String,
                headers: ["Min-Log-Position": signUp.header("Log-Position")!]
            )
            XCTAssertError(reply, 503, "request_timeout")
            XCTAssertLessThan(ContinuousClock.now - start, .seconds(2))
        }
    }

    /// The expiry job writes `walk_expired`; the sender is told, and the walk reads as expired.
    func testWalksExpireAndTheSenderIsNotified() async throws {
        try await GatewayFixture("expiry") { $0.walkTTL = 1 }.run { client in
            let a = try await client.signUp("early")
            let b = try await client.signUp("sleepy")
            try await client.makeMates(a, b)
            let walk = try await client.send(.post, "/v1/walks", token: a.token, json: WalkRoutesTests.walk(to: b))
            let id = walk.json["walk_id"] as! String
            var categories: [String?] = []
            for _ in 0..<40 where !categories.contains("walk_expired") {
                try await Task.sleep(for: .milliseconds(200))
                categories = try await client.send(.get, "/v1/me/notifications", token: a.token).items.map { $0["category"] as? String }
            }
            XCTAssertEqual(categories.first, "walk_expired")
            let read = try await client.send(.get, "/v1/walks/\(id)", token: b.token)
            XCTAssertEqual(read.json["status"] as? String, "expired")
            let expiredList = try await client.send(.get, "/v1/me/walks?status=expired", token: b.token)
            XCTAssertEqual(expiredList.items.map { $0["walk_id"] as? String }, [id])
        }
    }
}
