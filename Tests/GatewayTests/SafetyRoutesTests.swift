import Foundation
import Gateway
import HTTPTypes
import PersonalData
import XCTest

/// Blocks, reports and suspension over HTTP (API.md "Safety: blocks and reports"), the nickname
/// check and emptying the inbox: every route's success and every error code.
final class SafetyRoutesTests: XCTestCase {
    static let admin = "admin-secret"

    static func eventCount(_ client: GatewayFixture.Client) throws -> String? { try client.sql("SELECT count(*) FROM events")[0][0] }

    func testBlockingUnpairsCancelsAndHidesMyCardFromThem() async throws {
        try await GatewayFixture("blocks").run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben", dog: "Kongsu")
            try await client.makeMates(ana, ben)
            let walk = try await client.send(.post, "/v1/walks", token: ben.token, json: WalkRoutesTests.walk(to: ana))
            XCTAssertEqual(walk.status, 201, walk.text)
            let walkID = walk.json["walk_id"] as! String

            let blocked = try await client.send(.put, "/v1/me/blocks/\(ben.id)", token: ana.token)
            XCTAssertEqual(blocked.status, 204, blocked.text)
            let position = try XCTUnwrap(blocked.header("Log-Position"))
            let after = ["Min-Log-Position": position]

            // Unpaired, the walk cancelled, my card 404 to Ben (theirs stays visible to me).
            let mates = try await client.send(.get, "/v1/me/mates", token: ana.token, headers: after)
            XCTAssertEqual(mates.items.count, 0, mates.text)
            let cancelled = try await client.send(.get, "/v1/walks/\(walkID)", token: ben.token, headers: after)
            XCTAssertEqual(cancelled.json["status"] as? String, "cancelled", cancelled.text)
            XCTAssertError(try await client.send(.get, "/v1/users/\(ana.id)", token: ben.token, headers: after), 404, "not_found")
            let bensCard = try await client.send(.get, "/v1/users/\(ben.id)", token: ana.token, headers: after)
            XCTAssertEqual(bensCard.status, 200, bensCard.text)

            // Ben learns nothing new: a request with a token Ana really handed out fails as a bad
            // token would, and a walk is impossible.
            let drop = try await client.send(.post, "/v1/me/drop-tokens", token: ana.token).json["drop_token"] as! String
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/mate-requests",
                    token: ben.token,
                    json: #"{"to": "\#(ana.id)", "drop_token": "\#(drop)"}"#
                ),
                403,
                "invalid_drop_token"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/walks", token: ben.token, json: WalkRoutesTests.walk(to: ana)),
                409,
                "not_mates"
            )

            // My blocks.
            let list = try await client.send(.get, "/v1/me/blocks", token: ana.token, headers: after)
            XCTAssertEqual(list.status, 200, list.text)
            XCTAssertEqual(list.items.count, 1)
            XCTAssertEqual(list.items.first?["user_id"] as? String, ben.id)
            XCTAssertEqual(list.items.first?["dog_name"] as? String, "Kongsu")
            XCTAssertEqual(list.items.first?["nickname"] as? String, "Ben")
            XCTAssertNotNil(list.items.first?["blocked_at"] as? String)
            let awaited1 = try await client.send(.get, "/v1/me/blocks", token: ben.token, headers: after).items.count
            XCTAssertEqual(awaited1, 0)

            // Again, or someone who does not exist: 204 and nothing written.
            let events = try Self.eventCount(client)
            let awaited2 = try await client.send(.put, "/v1/me/blocks/\(ben.id)", token: ana.token).status
            XCTAssertEqual(awaited2, 204)
            let awaited3 = try await client.send(.put, "/v1/me/blocks/\(UUID().uuidString.lowercased())", token: ana.token).status
            XCTAssertEqual(awaited3, 204)
            XCTAssertEqual(try Self.eventCount(client), events)
            // Myself, or not an id.
            XCTAssertError(
                try await client.send(.put, "/v1/me/blocks/\(ana.id)", token: ana.token),
                400,
                "validation_failed",
                field: "user_id"
            )
            XCTAssertError(try await client.send(.put, "/v1/me/blocks/nobody", token: ana.token), 404, "not_found")
            XCTAssertError(try await client.send(.delete, "/v1/me/blocks/\(ana.id)", token: ana.token), 400, "validation_failed")
            XCTAssertError(try await client.send(.delete, "/v1/me/blocks/nobody", token: ana.token), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/me/blocks?limit=0", token: ana.token), 400, "validation_failed", field: "limit")
            XCTAssertError(
                try await client.send(.get, "/v1/me/blocks?cursor=forged", token: ana.token),
                400,
                "validation_failed",
                field: "cursor"
            )

            // Unblocked: still not mates, my card still 404 until we meet again; then we can.
            let unblocked = try await client.send(.delete, "/v1/me/blocks/\(ben.id)", token: ana.token)
            XCTAssertEqual(unblocked.status, 204, unblocked.text)
            let afterUnblock = ["Min-Log-Position": unblocked.header("Log-Position")!]
            let awaited4 = try await client.send(.get, "/v1/me/blocks", token: ana.token, headers: afterUnblock).items.count
            XCTAssertEqual(awaited4, 0)
            let awaited5 = try await client.send(.get, "/v1/me/mates", token: ana.token, headers: afterUnblock).items.count
            XCTAssertEqual(awaited5, 0)
            let awaited6 = try await client.send(.delete, "/v1/me/blocks/\(ben.id)", token: ana.token).status
            XCTAssertEqual(awaited6, 204)
            try await client.makeMates(ben, ana)
        }
    }

    func testReportsAndTheirReview() async throws {
        try await GatewayFixture("reports").run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben", dog: "Kongsu")
            let cy = try await client.signUp("Cy")
            try await client.makeMates(ana, ben)
            let walk = try await client.send(
                .post,
                "/v1/walks",
                token: ben.token,
                json: WalkRoutesTests.walk(to: ana, message: "Evidence q7z")
            )
            let walkID = walk.json["walk_id"] as! String

            let filed = try await client.send(
                .post,
                "/v1/reports",
                token: ana.token,
                json: #"{"user_id": "\#(ben.id)", "reason": "harassment", "walk_id": "\#(walkID)", "note": "rude note w4k"}"#,
                headers: ["Idempotency-Key": "report-1"]
            )
            XCTAssertEqual(filed.status, 201, filed.text)
            let reportID = try XCTUnwrap(filed.json["report_id"] as? String)
            XCTAssertNotNil(filed.header("Log-Position"))
            // A retry names the same report and writes nothing.
            let events = try Self.eventCount(client)
            let retried = try await client.send(
                .post,
                "/v1/reports",
                token: ana.token,
                json: #"{"user_id": "\#(ben.id)", "reason": "harassment", "walk_id": "\#(walkID)", "note": "rude note w4k"}"#,
                headers: ["Idempotency-Key": "report-1"]
            )
            XCTAssertEqual(retried.json["report_id"] as? String, reportID)
            XCTAssertEqual(try Self.eventCount(client), events)

            // Someone I never met, nobody, myself, a walk not between us: all 404 alike.
            for body in [
                #"{"user_id": "\#(cy.id)", "reason": "spam"}"#,
                #"{"user_id": "\#(UUID().uuidString)", "reason": "spam"}"#,
                #"{"user_id": "\#(ana.id)", "reason": "spam"}"#,
                #"{"user_id": "\#(ben.id)", "reason": "spam", "walk_id": "\#(UUID().uuidString)"}"#,
            ] {
                XCTAssertError(try await client.send(.post, "/v1/reports", token: ana.token, json: body), 404, "not_found")
            }
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/reports",
                    token: cy.token,
                    json: #"{"user_id": "\#(ben.id)", "reason": "spam", "walk_id": "\#(walkID)"}"#
                ),
                404,
                "not_found"
            )
            // Bad bodies.
            let long = String(repeating: "a", count: 501)
            for (body, field) in [
                (#"{"user_id": "\#(ben.id)", "reason": "boring"}"#, "reason"),
                (#"{"user_id": "\#(ben.id)", "reason": "spam", "note": "\#(long)"}"#, "note"),
                (#"{"user_id": "\#(ben.id)", "reason": "spam", "note": "nul\u0000"}"#, "note"),
                (#"{"user_id": "ben", "reason": "spam"}"#, "user_id"),
                (#"{"user_id": "\#(ben.id)", "reason": "spam", "walk_id": "w"}"#, "walk_id"),
            ] {
                XCTAssertError(
                    try await client.send(.post, "/v1/reports", token: ana.token, json: body),
                    400,
                    "validation_failed",
                    field: field
                )
            }
            XCTAssertError(try await client.send(.post, "/v1/reports", token: ana.token, json: "{"), 400, "invalid_json")
            XCTAssertEqual(try Self.eventCount(client), events, "a refused report wrote something")

            // The operators' review: both cards, the reason, the note and the walk's message.
            let position = ["Min-Log-Position": filed.header("Log-Position")!]
            let open = try await client.send(.get, "/v1/admin/reports", token: Self.admin, headers: position)
            XCTAssertEqual(open.status, 200, open.text)
            let report = try XCTUnwrap(open.items.first)
            XCTAssertEqual(open.items.count, 1)
            XCTAssertEqual(report["report_id"] as? String, reportID)
            XCTAssertEqual((report["reporter"] as? [String: Any])?["user_id"] as? String, ana.id)
            XCTAssertEqual((report["reported"] as? [String: Any])?["dog_name"] as? String, "Kongsu")
            XCTAssertEqual(report["reason"] as? String, "harassment")
            XCTAssertEqual(report["note"] as? String, "rude note w4k")
            XCTAssertEqual(report["walk_message"] as? String, "Evidence q7z")
            XCTAssertEqual(report["status"] as? String, "open")
            XCTAssertError(try await client.send(.get, "/v1/admin/reports?status=closed", token: Self.admin), 400, "validation_failed")

            // Users' tokens do not open the operators' routes.
            for token in [ana.token, ben.token] {
                XCTAssertError(try await client.send(.get, "/v1/admin/reports", token: token), 401, "unauthorized")
                XCTAssertError(try await client.send(.post, "/v1/admin/reports/\(reportID)/resolve", token: token), 401, "unauthorized")
                XCTAssertError(
                    try await client.send(.post, "/v1/admin/users/\(ben.id)/suspend", token: token, json: #"{"reason": "x"}"#),
                    401,
                    "unauthorized"
                )
                XCTAssertError(try await client.send(.post, "/v1/admin/users/\(ben.id)/unsuspend", token: token), 401, "unauthorized")
                XCTAssertError(try await client.send(.get, "/v1/admin/projections", token: token), 401, "unauthorized")
            }

            let resolved = try await client.send(.post, "/v1/admin/reports/\(reportID)/resolve", token: Self.admin)
            XCTAssertEqual(resolved.status, 200, resolved.text)
            XCTAssertEqual(resolved.json["status"] as? String, "resolved")
            XCTAssertNotNil(resolved.json["resolved_at"] as? String)
            let again = try await client.send(.post, "/v1/admin/reports/\(reportID)/resolve", token: Self.admin)
            XCTAssertEqual(again.status, 200, again.text)
            XCTAssertEqual(again.json["resolved_at"] as? String, resolved.json["resolved_at"] as? String)
            XCTAssertError(
                try await client.send(.post, "/v1/admin/reports/\(UUID().uuidString)/resolve", token: Self.admin),
                404,
                "not_found"
            )
            XCTAssertError(try await client.send(.post, "/v1/admin/reports/nope/resolve", token: Self.admin), 404, "not_found")
            let after = ["Min-Log-Position": resolved.header("Log-Position")!]
            let awaited7 = try await client.send(.get, "/v1/admin/reports", token: Self.admin, headers: after).items.count
            XCTAssertEqual(awaited7, 0)
            let done = try await client.send(.get, "/v1/admin/reports?status=resolved", token: Self.admin, headers: after)
            XCTAssertEqual(done.items.first?["report_id"] as? String, reportID)

            // The reporter's note is sealed in the log under the reporter's key.
            let stored = try client.sql("SELECT data::text FROM events WHERE event_type = 'user_reported'")
            XCTAssertEqual(stored.count, 1)
            XCTAssertFalse(stored[0][0]!.contains("rude note w4k"), "the note is in the log in the clear")
        }
    }

    func testSuspensionEndsSessionsRefusesSignInHidesTheCardAndWithdrawsWhatWaits() async throws {
        try await GatewayFixture("suspension").run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben")
            let cy = try await client.signUp("Cy")
            try await client.makeMates(ana, ben)
            let walk = try await client.send(.post, "/v1/walks", token: ana.token, json: WalkRoutesTests.walk(to: ben))
            let walkID = walk.json["walk_id"] as! String
            let drop = try await client.send(.post, "/v1/me/drop-tokens", token: cy.token).json["drop_token"] as! String
            let request = try await client.send(
                .post,
                "/v1/mate-requests",
                token: ana.token,
                json: #"{"to": "\#(cy.id)", "drop_token": "\#(drop)"}"#
            )
            XCTAssertEqual(request.status, 201, request.text)
            let requestID = request.json["request_id"] as! String
            let code = try await client.send(.post, "/v1/me/transfer-codes", token: ana.token).json["transfer_code"] as! String
            let otherPhone = try await client.send(.post, "/v1/me/transfer-codes", token: ana.token).json["transfer_code"] as! String
            let phone2 =
                try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(otherPhone)"}"#).json["token"] as! String

            XCTAssertError(
                try await client.send(.post, "/v1/admin/users/\(ana.id)/suspend", token: Self.admin, json: #"{"reason": ""}"#),
                400,
                "validation_failed",
                field: "reason"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/admin/users/\(ana.id)/suspend", token: Self.admin, json: "{}"),
                400,
                "validation_failed"
            )
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/admin/users/\(UUID().uuidString)/suspend",
                    token: Self.admin,
                    json: #"{"reason": "spam"}"#
                ),
                404,
                "user_not_found"
            )
            let suspended = try await client.send(
                .post,
                "/v1/admin/users/\(ana.id)/suspend",
                token: Self.admin,
                json: #"{"reason": "spam walks"}"#
            )
            XCTAssertEqual(suspended.status, 204, suspended.text)
            let after = ["Min-Log-Position": suspended.header("Log-Position")!]

            // Every session ends; no new one opens.
            for token in [ana.token, phone2] { XCTAssertError(try await client.send(.get, "/v1/me", token: token), 401, "unauthorized") }
            XCTAssertError(
                try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(code)"}"#),
                403,
                "account_suspended"
            )
            // The card is 404 to everyone, even a mate; what waited on Ana is withdrawn.
            for viewer in [ben, cy] {
                XCTAssertError(try await client.send(.get, "/v1/users/\(ana.id)", token: viewer.token, headers: after), 404, "not_found")
            }
            let walkNow = try await client.send(.get, "/v1/walks/\(walkID)", token: ben.token, headers: after)
            XCTAssertEqual(walkNow.json["status"] as? String, "cancelled", walkNow.text)
            let requests = try await client.send(.get, "/v1/me/mate-requests?direction=incoming", token: cy.token, headers: after)
            XCTAssertEqual(requests.items.first?["request_id"] as? String, requestID)
            XCTAssertEqual(requests.items.first?["status"] as? String, "cancelled", requests.text)

            // Suspending again changes nothing; lifting it lets the kept code sign in, and the card is back.
            let events = try Self.eventCount(client)
            let again = try await client.send(.post, "/v1/admin/users/\(ana.id)/suspend", token: Self.admin, json: #"{"reason": "again"}"#)
            XCTAssertEqual(again.status, 204)
            XCTAssertEqual(try Self.eventCount(client), events)
            let lifted = try await client.send(.post, "/v1/admin/users/\(ana.id)/unsuspend", token: Self.admin)
            XCTAssertEqual(lifted.status, 204, lifted.text)
            XCTAssertError(
                try await client.send(.post, "/v1/admin/users/\(UUID().uuidString)/unsuspend", token: Self.admin),
                404,
                "user_not_found"
            )
            let back = try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(code)"}"#)
            XCTAssertEqual(back.status, 201, back.text)
            let card = try await client.send(
                .get,
                "/v1/users/\(ana.id)",
                token: ben.token,
                headers: ["Min-Log-Position": lifted.header("Log-Position")!]
            )
            XCTAssertEqual(card.status, 200, card.text)
            // The old sessions stay ended.
            XCTAssertError(try await client.send(.get, "/v1/me", token: phone2), 401, "unauthorized")
        }
    }

    func testASuspendedUsersSessionsAreRefusedByASecondServeProcessWithinOneSecond() async throws {
        let fixture = try GatewayFixture("suspension_two_processes")
        let server = try ServeProcess.start(fixture)
        defer { server.stop() }
        try await fixture.run { client in
            let mia = try await client.signUp("Mia")
            let phone2 = try await client.secondPhone(mia)
            try await server.waitUntilReady()
            for token in [mia.token, phone2] {
                let status = try await server.status("/v1/me", token: token)
                XCTAssertEqual(status, 200)
            }
            let suspended = try await client.send(
                .post,
                "/v1/admin/users/\(mia.id)/suspend",
                token: Self.admin,
                json: #"{"reason": "spam"}"#
            )
            XCTAssertEqual(suspended.status, 204, suspended.text)
            let start = ContinuousClock.now
            var refused: Set<String> = []
            while refused.count < 2, ContinuousClock.now - start < .seconds(3) {
                for token in [mia.token, phone2] where !refused.contains(token) {
                    if try await server.status("/v1/me", token: token) == 401 { refused.insert(token) }
                }
                if refused.count < 2 { try await Task.sleep(for: .milliseconds(20)) }
            }
            let took = ContinuousClock.now - start
            XCTAssertEqual(refused.count, 2, "a suspended session still works on the second process")
            XCTAssertLessThan(took, .seconds(1), "the suspension reached the other process after \(took)")
            print("SafetyRoutesTests: a suspension reached the second serve process after \(took)")
        }
    }

    func testNicknameAvailability() async throws {
        try await GatewayFixture("nicknames").run { client in
            _ = try await client.signUp("Rex")
            func check(_ path: String) async throws -> GatewayFixture.Reply { try await client.send(.get, "/v1/nicknames/\(path)") }
            for taken in ["Rex", "rEX", "%EF%BD%92%EF%BD%85%EF%BD%98"] {  // the last is fullwidth ｒｅｘ
                let reply = try await check(taken)
                XCTAssertEqual(reply.status, 200, reply.text)
                XCTAssertEqual(reply.json["available"] as? Bool, false, taken)
            }
            // Free, and shown as it would be stored: NFC (the NFD spelling of josé comes back composed).
            let free = try await check("jose%CC%81")
            XCTAssertEqual(free.json["available"] as? Bool, true, free.text)
            XCTAssertEqual(free.json["nickname"] as? String, "jos\u{E9}")
            let korean = try await check("%EB%A9%8D%EB%A9%8D")  // 멍멍
            XCTAssertEqual(korean.json["available"] as? Bool, true)
            for bad in ["x", "waytoolongname", "nul%00nul", "%D0%B0b", "bad%ZZ", "%E2%80%AEab"] {
                XCTAssertError(try await check(bad), 400, "validation_failed", field: "nickname")
            }
        }
        // A budget per address of its own.
        let limited = try GatewayFixture("nickname_budget") {
            $0.rateLimits = .init(ip: nil, signUp: nil, user: nil, nicknames: .init(burst: 2, perSecond: 0.01))
        }
        try await limited.run { client in
            for _ in 0..<2 {
                let allowed = try await client.send(.get, "/v1/nicknames/someone")
                XCTAssertEqual(allowed.status, 200)
            }
            let limitedReply = try await client.send(.get, "/v1/nicknames/someone")
            XCTAssertError(limitedReply, 429, "rate_limited")
            XCTAssertNotNil(limitedReply.header("Retry-After"))
        }
    }

    func testEmptyingTheInboxKeepsLaterEntries() async throws {
        try await GatewayFixture("empty_inbox").run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben")
            try await client.makeMates(ana, ben)
            let first = try await client.send(.post, "/v1/walks", token: ana.token, json: WalkRoutesTests.walk(to: ben))
            let inbox = try await client.send(
                .get,
                "/v1/me/notifications",
                token: ben.token,
                headers: ["Min-Log-Position": first.header("Log-Position")!]
            )
            XCTAssertEqual(inbox.items.count, 2, inbox.text)  // mate_requested, walk_requested
            let emptied = try await client.send(.delete, "/v1/me/notifications", token: ben.token)
            XCTAssertEqual(emptied.status, 204, emptied.text)
            let empty = try await client.send(
                .get,
                "/v1/me/notifications",
                token: ben.token,
                headers: ["Min-Log-Position": emptied.header("Log-Position")!]
            )
            XCTAssertEqual(empty.items.count, 0, empty.text)
            // Ana's inbox (her mate_accepted) is her own.
            let awaited8 = try await client.send(.get, "/v1/me/notifications", token: ana.token).items.count
            XCTAssertEqual(awaited8, 1)
            let later = try await client.send(.post, "/v1/walks", token: ana.token, json: WalkRoutesTests.walk(to: ben, message: "Later"))
            let now = try await client.send(
                .get,
                "/v1/me/notifications",
                token: ben.token,
                headers: ["Min-Log-Position": later.header("Log-Position")!]
            )
            XCTAssertEqual(now.items.map { $0["message"] as? String }, ["Later"])
            let awaited9 = try await client.send(.delete, "/v1/me/notifications", token: ben.token).status
            XCTAssertEqual(awaited9, 204)
        }
    }
}
