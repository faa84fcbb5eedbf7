import Foundation
import Gateway
import HTTPTypes
import Logging
import Synchronization
import XCTest

final class OperationsTests: XCTestCase {
    func testHealthAndReadiness() async throws {
        try await GatewayFixture("ops").run { client in
            let health = try await client.send(.get, "/healthz")
            XCTAssertEqual(health.status, 200)
            XCTAssertEqual(health.json["status"] as? String, "ok")
            let ready = try await client.send(.get, "/readyz")
            XCTAssertEqual(ready.status, 200, ready.text)
            XCTAssertNotNil(ready.header("X-Request-Id"))
        }
    }

    /// The client's sane `X-Request-Id` is echoed, anything else replaced by a new id; the id is
    /// on the request's log line, once.
    func testRequestIDsAreEchoedOrMadeAndLogged() async throws {
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test") { label in
            LogfmtLogHandler(label: label) { line in lines.withLock { $0.append(String(decoding: line, as: UTF8.self)) } }
        }
        try await GatewayFixture("request-ids", background: []).run(logger: logger) { client in
            let echoed = try await client.send(.get, "/healthz", headers: ["X-Request-Id": "client-id-1"])
            XCTAssertEqual(echoed.header("X-Request-Id"), "client-id-1")
            let replaced = try await client.send(.get, "/healthz", headers: ["X-Request-Id": "has space"])
            let made = try await client.send(.get, "/healthz")
            let ids = [replaced.header("X-Request-Id") ?? "", made.header("X-Request-Id") ?? ""]
            XCTAssertFalse(ids.contains("has space"))
            XCTAssertFalse(ids.contains(""))
            XCTAssertNotEqual(ids[0], ids[1], "a new id per request")
            let requestLines = lines.withLock { $0 }.filter { $0.contains(" request ") && $0.contains("path=/healthz") }
            XCTAssertEqual(requestLines.count, 3, "\(lines.withLock { $0 })")
            for (line, id) in zip(requestLines, ["client-id-1"] + ids) {
                XCTAssertTrue(line.contains(" request_id=\(id) "), line)
                XCTAssertFalse(line.contains("hb.request.id"), line)
            }
        }
    }

    /// A database that does not answer: not ready, authenticated routes `503 unavailable`, and
    /// the process still alive.
    func testDatabaseDownIsUnavailable() async throws {
        let fixture = try GatewayFixture("down") { $0.databaseURL = "host=127.0.0.1 port=1 dbname=nothing connect_timeout=1" }
        try await fixture.run { client in
            let health = try await client.send(.get, "/healthz")
            XCTAssertEqual(health.status, 200)
            XCTAssertError(try await client.send(.get, "/readyz"), 503, "unavailable")
            XCTAssertError(
                try await client.send(.get, "/v1/me", token: "x".padding(toLength: 43, withPad: "x", startingAt: 0)),
                503,
                "unavailable"
            )
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/users",
                    json: """
                        {"nickname": "nobody", "dog_name": "Bo", "age": 3, "sex": "male", "neutered": false, "size": "large", "keywords": ["smart"]}
                        """
                ),
                503,
                "unavailable"
            )
        }
    }

    /// An unmigrated database answers but is not ready.
    func testReadinessNeedsCurrentSchema() async throws {
        let fixture = try GatewayFixture("stale")
        try await fixture.run { client in
            _ = try client.sql("DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)")
            XCTAssertError(try await client.send(.get, "/readyz"), 503, "schema_not_current")
        }
    }

    func testMetricsCountRequestsByRouteAndStatus() async throws {
        try await GatewayFixture("metrics").run { client in
            _ = try await client.send(.get, "/healthz")
            _ = try await client.send(.get, "/healthz")
            _ = try await client.send(.get, "/no/such/route")
            // Made-up methods share one label: a client cannot grow the registry with them.
            for made in ["BREW", "FETCHX", "Q1"] { _ = try await client.send(HTTPRequest.Method(made)!, "/healthz") }
            let user = try await client.signUp("metric")
            let metrics = try await client.send(.get, "/metrics")
            XCTAssertEqual(metrics.status, 200)
            XCTAssertTrue(metrics.header("Content-Type")?.hasPrefix("text/plain") ?? false)
            let text = metrics.text
            XCTAssertTrue(text.contains(#"sniffmeet_http_requests_total{method="GET",route="/healthz",status="200"} 2"#), text)
            XCTAssertTrue(text.contains(#"sniffmeet_http_requests_total{method="other",route="#), text)
            XCTAssertFalse(text.contains("BREW"), text)
            XCTAssertFalse(text.contains("FETCHX"), text)
            XCTAssertTrue(text.contains(#"status="404""#), text)
            XCTAssertTrue(text.contains("sniffmeet_http_request_duration_seconds_bucket"), text)
            XCTAssertTrue(text.contains(#"sniffmeet_events_appended_total{command="RegisterUser"} 2"#), text)
            XCTAssertFalse(user.token.isEmpty)
        }
    }

    func testAdminProjectionsNeedsTheAdminToken() async throws {
        try await GatewayFixture("admin").run { client in
            XCTAssertError(try await client.send(.get, "/v1/admin/projections"), 401, "unauthorized")
            XCTAssertError(try await client.send(.get, "/v1/admin/projections", token: "wrong"), 401, "unauthorized")
            let user = try await client.signUp("admin")
            XCTAssertError(try await client.send(.get, "/v1/admin/projections", token: user.token), 401, "unauthorized")
            let reply = try await client.send(.get, "/v1/admin/projections", token: "admin-secret")
            XCTAssertEqual(reply.status, 200, reply.text)
            let projectors = reply.json["projectors"] as? [[String: Any]] ?? []
            XCTAssertEqual(
                Set(projectors.compactMap { $0["name"] as? String }),
                ["profiles", "mates", "mate_requests", "walks", "notifications", "safety", "walk_logs", "chats", "audit"]
            )
            XCTAssertNotNil(reply.json["head"] as? String)
        }
    }

    func testOpenAPIDocumentIsServed() async throws {
        try await GatewayFixture("openapi").run { client in
            let reply = try await client.send(.get, "/openapi.json")
            XCTAssertEqual(reply.status, 200)
            XCTAssertEqual(reply.json["openapi"] as? String, "3.1.0")
        }
    }
}
