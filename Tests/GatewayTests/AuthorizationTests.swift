import Foundation
import Gateway
import HTTPTypes
import XCTest

/// Every route checks who asks: no token is `401`; a second, unrelated user gets `403` or `404`
/// and never sees anything of the first user's.
final class AuthorizationTests: XCTestCase {
    static let publicRoutes: Set<String> = [
        "POST /v1/users", "POST /v1/sessions", "GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.json",
        "GET /v1/nicknames/{nickname}",
        "GET /v1/photos/{id}", "GET /v1/photos/{id}/thumbnail",
    ]

    func testEveryNonPublicRouteNeedsAToken() async throws {
        let fixture = try GatewayFixture("noauth")
        let routes = try OpenAPIDocument.operations()
        XCTAssertGreaterThan(routes.count, 20)
        try await fixture.run { client in
            for route in routes where !Self.publicRoutes.contains("\(route.method) \(route.path)") {
                let path = route.path.replacingOccurrences(of: "{id}", with: UUID().uuidString.lowercased())
                    .replacingOccurrences(of: "{user_id}", with: UUID().uuidString.lowercased())
                let reply = try await client.send(
                    .init(route.method)!,
                    path,
                    json: route.method == "GET" || route.method == "DELETE" ? nil : "{}"
                )
                XCTAssertError(reply, 401, "unauthorized")
                XCTAssertError(
                    try await client.send(
                        .init(route.method)!,
                        path,
                        token: "forged-token-of-the-right-length-43-chars-x",
                        json: route.method == "GET" || route.method == "DELETE" ? nil : "{}"
                    ),
                    401,
                    "unauthorized"
                )
            }
        }
    }

    /// The first user builds a little world (a mate, a request, a walk, notifications); an
    /// outsider then tries every route on it.
    func testAnOutsiderSeesNothingOfAnotherUsersWorld() async throws {
        try await GatewayFixture("outsider").run { client in
            let owner = try await client.signUp("owner")
            let mate = try await client.signUp("mate")
            let pendingTo = try await client.signUp("pending")
            let outsider = try await client.signUp("outside")
            try await client.makeMates(owner, mate)
            let drop = try await client.send(.post, "/v1/me/drop-tokens", token: pendingTo.token).json["drop_token"] as! String
            let request = try await client.send(
                .post,
                "/v1/mate-requests",
                token: owner.token,
                json: #"{"to": "\#(pendingTo.id)", "drop_token": "\#(drop)"}"#
            )
            let requestID = request.json["request_id"] as! String
            let walk = try await client.send(.post, "/v1/walks", token: owner.token, json: WalkRoutesTests.walk(to: mate))
            let walkID = walk.json["walk_id"] as! String
            let position = walk.header("Log-Position")!
            // Let the read models catch up so that the owner's world is really there to be seen.
            let mine = try await client.send(.get, "/v1/me/walks", token: owner.token, headers: ["Min-Log-Position": position])
            XCTAssertEqual(mine.items.count, 1, mine.text)
            let inbox = try await client.send(.get, "/v1/me/notifications", token: mate.token, headers: ["Min-Log-Position": position])
            let notificationID = try XCTUnwrap(inbox.items.first?["notification_id"] as? String, inbox.text)

            let secrets = [owner.id, mate.id, pendingTo.id, requestID, walkID, notificationID, "Park at 5?"]
            func assertNothingLeaks(_ reply: GatewayFixture.Reply, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
                for secret in secrets {
                    XCTAssertFalse(reply.text.contains(secret), "\(what) leaked \(secret): \(reply.text)", file: file, line: line)
                }
            }
            let t = outsider.token
            // Reads: 404, or an empty list.
            for path in ["/v1/users/\(owner.id)", "/v1/users/\(mate.id)", "/v1/walks/\(walkID)"] {
                let reply = try await client.send(.get, path, token: t, headers: ["Min-Log-Position": position])
                XCTAssertError(reply, 404, "not_found")
                assertNothingLeaks(reply, path)
            }
            for path in ["/v1/me", "/v1/me/mates", "/v1/me/mate-requests", "/v1/me/walks", "/v1/me/notifications"] {
                let reply = try await client.send(.get, path, token: t, headers: ["Min-Log-Position": position])
                XCTAssertEqual(reply.status, 200, reply.text)
                assertNothingLeaks(reply, path)
            }
            // Writes on the owner's things: 403 or 404, and nothing changes.
            let events = try client.sql("SELECT count(*) FROM events")[0][0]
            let attempts: [(HTTPRequest.Method, String, String?)] = [
                (.post, "/v1/mate-requests/\(requestID)/accept", nil), (.post, "/v1/mate-requests/\(requestID)/decline", nil),
                (.delete, "/v1/mate-requests/\(requestID)", nil), (.delete, "/v1/me/mates/\(owner.id)", nil),
                (.post, "/v1/walks/\(walkID)/response", #"{"answer": "accept"}"#), (.delete, "/v1/walks/\(walkID)", nil),
                (.delete, "/v1/me/notifications/\(notificationID)", nil),
                (.post, "/v1/walks", WalkRoutesTests.walk(to: owner)),
                (.post, "/v1/mate-requests", #"{"to": "\#(owner.id)", "drop_token": "guessed"}"#),
                (.post, "/v1/reports", #"{"user_id": "\#(owner.id)", "reason": "spam"}"#),
                (.post, "/v1/reports", #"{"user_id": "\#(mate.id)", "reason": "spam", "walk_id": "\#(walkID)"}"#),
            ]
            for (method, path, body) in attempts {
                let reply = try await client.send(method, path, token: t, json: body)
                XCTAssertTrue([403, 404, 409].contains(reply.status), "\(method) \(path): \(reply.status) \(reply.text)")
                XCTAssertNotNil(reply.code)
                assertNothingLeaks(reply, "\(method) \(path)")
            }
            // The operators' routes refuse a user's token, whoever's.
            for token in [t, owner.token] {
                for (method, path, body) in [
                    (HTTPRequest.Method.get, "/v1/admin/reports", nil), (.get, "/v1/admin/projections", nil),
                    (.post, "/v1/admin/reports/\(requestID)/resolve", nil),
                    (.post, "/v1/admin/users/\(owner.id)/suspend", #"{"reason": "outsider"}"#),
                    (.post, "/v1/admin/users/\(owner.id)/unsuspend", nil),
                ] as [(HTTPRequest.Method, String, String?)] {
                    XCTAssertError(try await client.send(method, path, token: token, json: body), 401, "unauthorized")
                }
            }
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0], events, "an outsider's attempt changed the log")
            // Emptying my inbox and my blocks are mine alone.
            let awaited1 = try await client.send(.delete, "/v1/me/notifications", token: t).status
            XCTAssertEqual(awaited1, 204)
            let awaited2 = try await client.send(.put, "/v1/me/blocks/\(owner.id)", token: t).status
            XCTAssertEqual(awaited2, 204)
            let blocks = try await client.send(.get, "/v1/me/blocks", token: owner.token)
            XCTAssertEqual(blocks.items.count, 0)
            assertNothingLeaks(try await client.send(.get, "/v1/me/blocks", token: t), "GET /v1/me/blocks")
            // The owner's notification is still in the mate's inbox.
            let still = try await client.send(.get, "/v1/me/notifications", token: mate.token)
            XCTAssertTrue(still.text.contains(notificationID))

            // Walk logs: the owner's log (visible to mates) is 404 to the outsider on every route,
            // their own lists show nothing of it, and nothing changes.
            let walkLog = try await client.record(owner)
            let walkLogID = try XCTUnwrap(walkLog.json["walk_log_id"] as? String)
            let walkLogRoute = try XCTUnwrap(walkLog.json["route"] as? String)
            let afterLog = ["Min-Log-Position": walkLog.header("Log-Position")!]
            let logEvents = try client.sql("SELECT count(*) FROM events")[0][0]
            for path in ["/v1/walk-logs/\(walkLogID)", "/v1/walk-logs/\(walkLogID)/gpx", "/v1/users/\(owner.id)/walk-logs"] {
                let reply = try await client.send(.get, path, token: t, headers: afterLog)
                XCTAssertError(reply, 404, "not_found")
                XCTAssertFalse(reply.text.contains(walkLogRoute))
            }
            for (method, path, body) in [
                (HTTPRequest.Method.patch, "/v1/walk-logs/\(walkLogID)", #"{"visibility": "private"}"#),
                (.delete, "/v1/walk-logs/\(walkLogID)", nil),
            ] as [(HTTPRequest.Method, String, String?)] {
                XCTAssertError(try await client.send(method, path, token: t, json: body), 404, "not_found")
            }
            for path in ["/v1/me/walk-logs", "/v1/me/privacy-zones", "/v1/me/walk-stats"] {
                let reply = try await client.send(.get, path, token: t, headers: afterLog)
                XCTAssertEqual(reply.status, 200, reply.text)
                XCTAssertFalse(reply.text.contains(walkLogID))
                XCTAssertFalse(reply.text.contains(walkLogRoute))
                assertNothingLeaks(reply, path)
            }
            let outsidersZones = try await client.send(.put, "/v1/me/privacy-zones", token: t, json: #"{"zones": []}"#)
            XCTAssertEqual(outsidersZones.status, 200)
            let outsidersLog = try await client.record(GatewayFixture.User(id: "", token: t))
            XCTAssertEqual(outsidersLog.status, 201)
            XCTAssertEqual(
                try client.sql("SELECT count(*) FROM events")[0][0].flatMap(Int.init),
                logEvents.flatMap(Int.init).map { $0 + 1 }
            )
            let ownersLog = try await client.send(.get, "/v1/walk-logs/\(walkLogID)", token: owner.token, headers: afterLog)
            XCTAssertEqual(ownersLog.json["visibility"] as? String, "mates", "the outsider changed the owner's log")

            // Sessions and devices: the outsider can end no session but their own, sees only
            // their own, and their device token and deletion touch nobody else.
            let ownersSessions = try await client.send(.get, "/v1/me/sessions", token: owner.token)
            let ownersSession = try XCTUnwrap(ownersSessions.items.first?["session_id"] as? String)
            XCTAssertError(try await client.send(.delete, "/v1/me/sessions/\(ownersSession)", token: t), 404, "not_found")
            let outsidersSessions = try await client.send(.get, "/v1/me/sessions", token: t)
            XCTAssertEqual(outsidersSessions.items.count, 1)
            assertNothingLeaks(outsidersSessions, "GET /v1/me/sessions")
            XCTAssertFalse(outsidersSessions.text.contains(ownersSession))
            let device = #"{"device_token": "\#(String(repeating: "ab", count: 32))"}"#
            let registered = try await client.send(.put, "/v1/me/device-token", token: owner.token, json: device)
            XCTAssertEqual(registered.status, 204)
            let unregistered = try await client.send(.delete, "/v1/me/device-token", token: t)
            XCTAssertEqual(unregistered.status, 204)
            let afterwards = try await client.send(.get, "/v1/me/sessions", token: owner.token)
            XCTAssertEqual(afterwards.items.first?["push"] as? Bool, true)
            let deleted = try await client.send(.delete, "/v1/me", token: t)
            XCTAssertEqual(deleted.status, 204)
            let ownerStill = try await client.send(.get, "/v1/me", token: owner.token)
            XCTAssertEqual(ownerStill.status, 200, "the outsider's deletion is their own")
            let ownersMates = try await client.send(
                .get,
                "/v1/me/mates",
                token: owner.token,
                headers: ["Min-Log-Position": deleted.header("Log-Position")!]
            )
            XCTAssertEqual(ownersMates.items.count, 1)
        }
    }
}
