import Foundation
import Gateway
import XCTest

/// Budgets per IP before sign-in, per user after; `429 rate_limited` with `Retry-After` past them.
final class RateLimitTests: XCTestCase {
    func testAnonymousRequestsSpendTheAddressBudget() async throws {
        let fixture = try GatewayFixture("ratelimitip") {
            $0.rateLimits = .init(ip: .init(burst: 3, perSecond: 0.01), signUp: nil, user: nil)
        }
        try await fixture.run { client in
            for _ in 0..<3 {
                let reply = try await client.send(.get, "/openapi.json")
                XCTAssertEqual(reply.status, 200)
            }
            let limited = try await client.send(.get, "/openapi.json")
            XCTAssertError(limited, 429, "rate_limited")
            XCTAssertEqual(limited.header("Retry-After").flatMap(Int.init).map { $0 >= 1 }, true, limited.text)
            // Probes of load balancers and scrapers are not counted.
            for _ in 0..<5 {
                let reply = try await client.send(.get, "/healthz")
                XCTAssertEqual(reply.status, 200)
            }
        }
    }

    func testWrongTokensSpendTheAddressBudget() async throws {
        let fixture = try GatewayFixture("ratelimitguess") {
            $0.rateLimits = .init(ip: .init(burst: 3, perSecond: 0.01), signUp: nil, user: nil)
        }
        try await fixture.run { client in
            for _ in 0..<3 { XCTAssertError(try await client.send(.get, "/v1/me", token: "guess"), 401, "unauthorized") }
            XCTAssertError(try await client.send(.get, "/v1/me", token: "guess"), 429, "rate_limited")
        }
    }

    func testSignUpsHaveTheirOwnBudget() async throws {
        let fixture = try GatewayFixture("ratelimitsignup") {
            $0.rateLimits = .init(ip: .init(burst: 100, perSecond: 1), signUp: .init(burst: 2, perSecond: 0.01), user: nil)
        }
        try await fixture.run { client in
            _ = try await client.signUp("first")
            _ = try await client.signUp("second")
            let third = try await client.send(.post, "/v1/users", json: HostileInputTests.signUp(nickname: "third"))
            XCTAssertError(third, 429, "rate_limited")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM sessions")[0][0], "2", "a limited sign-up writes nothing")
        }
    }

    func testSignedInRequestsSpendTheUserBudget() async throws {
        let fixture = try GatewayFixture("ratelimituser") {
            $0.rateLimits = .init(ip: nil, signUp: nil, user: .init(burst: 4, perSecond: 0.01))
        }
        try await fixture.run { client in
            // A list that answers 200 however far the projectors are (GET /v1/me would race them).
            let a = try await client.signUp("busy")
            let b = try await client.signUp("calm")
            for _ in 0..<4 {
                let reply = try await client.send(.get, "/v1/me/mates", token: a.token)
                XCTAssertEqual(reply.status, 200)
            }
            XCTAssertError(try await client.send(.get, "/v1/me/mates", token: a.token), 429, "rate_limited")
            let other = try await client.send(.get, "/v1/me/mates", token: b.token)
            XCTAssertEqual(other.status, 200, "another user's budget is untouched")
        }
    }

    func testBucketsRefillAtTheirRate() throws {
        let limiter = RateLimiter(budgets: .init(ip: .init(burst: 2, perSecond: 1), signUp: nil, user: nil))
        let t0 = ContinuousClock.now
        try limiter.spend(.ip("a"), now: t0)
        try limiter.spend(.ip("a"), now: t0)
        XCTAssertThrowsError(try limiter.spend(.ip("a"), now: t0)) { error in
            XCTAssertEqual((error as? APIError)?.headers["Retry-After"], "1")
        }
        XCTAssertNoThrow(try limiter.spend(.ip("b"), now: t0), "addresses have their own buckets")
        XCTAssertNoThrow(try limiter.spend(.ip("a"), now: t0 + .milliseconds(1000)))
        XCTAssertThrowsError(try limiter.spend(.ip("a"), now: t0 + .milliseconds(1100)))
    }

    func testBucketsAreBounded() throws {
        let limiter = RateLimiter(budgets: .init(ip: .init(burst: 1, perSecond: 1000), signUp: nil, user: nil), capacity: 100)
        let t0 = ContinuousClock.now
        // Idle (refilled) buckets are forgotten to make room; a flood of addresses cannot grow the map.
        for i in 0..<1000 { try limiter.spend(.ip("10.0.\(i / 256).\(i % 256)"), now: t0 + .seconds(i)) }
        XCTAssertLessThanOrEqual(limiter.bucketCount, 100)
    }

    func testBudgetsParse() {
        XCTAssertEqual(RateLimiter.Budgets(parsing: "off"), .off)
        XCTAssertEqual(RateLimiter.Budgets(parsing: "user=10:2")?.user, .init(burst: 10, perSecond: 2))
        XCTAssertEqual(RateLimiter.Budgets(parsing: "user=10:2")?.ip, RateLimiter.Budgets.standard.ip)
        XCTAssertNil(RateLimiter.Budgets(parsing: "user=10"))
        XCTAssertNil(RateLimiter.Budgets(parsing: "users=10:2"))
        XCTAssertNil(RateLimiter.Budgets(parsing: "ip=0:1"))
        XCTAssertNil(RateLimiter.Budgets(parsing: "ip=1:inf"))
        XCTAssertThrowsError(try GatewayConfiguration(databaseURL: "").applyingEnvironment(["SNIFFMEET_RATE_LIMITS": "of"]))
    }

    /// The stream cache's size from the environment; nonsense leaves the default.
    func testStreamCacheStatesFromTheEnvironment() throws {
        let standard = GatewayConfiguration(databaseURL: "")
        XCTAssertEqual(standard.streamCacheStates, 200_000)
        XCTAssertEqual(try standard.applyingEnvironment(["SNIFFMEET_STREAM_CACHE_STATES": "50000"]).streamCacheStates, 50_000)
        for nonsense in ["0", "-5", "lots", ""] {
            XCTAssertEqual(try standard.applyingEnvironment(["SNIFFMEET_STREAM_CACHE_STATES": nonsense]).streamCacheStates, 200_000)
        }
    }
}
