import Foundation
import Gateway
import HTTPTypes
import Postgres
import XCTest

/// The operator console over HTTP: signed out is always the sign-in page, forms need their CSRF
/// token and this site's origin, sessions end, and everything a user wrote shows as text.
final class ConsoleRoutesTests: XCTestCase {
    static let password = "correct horse battery"
    static let rex = "<b>Rex</b>"
    static let note = "<img src=x onerror=alert(1)>"

    /// A signed-in operator's cookie header and CSRF token.
    struct Operator {
        var name: String
        var cookie: String
        var csrf: String
        var headers: [String: String] { ["Cookie": "sniffmeet_console=\(cookie)"] }
    }

    static func form(_ fields: [String: String]) -> Data {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return Data(
            fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&").utf8
        )
    }

    static func post(
        _ client: GatewayFixture.Client,
        _ uri: String,
        _ fields: [String: String],
        headers: [String: String] = [:]
    ) async throws -> GatewayFixture.Reply {
        try await client.send(
            .post,
            uri,
            body: form(fields),
            headers: ["Content-Type": "application/x-www-form-urlencoded"].merging(headers) { _, new in new }
        )
    }

    /// Adds `name` as the command line does, sets the password through the link, signs in.
    static func signIn(_ client: GatewayFixture.Client, _ name: String = "mina") async throws -> Operator {
        let link = try OperatorStore.add(name, on: try Connection(connectionString: client.ownerURL))
        let page = try await client.send(.get, "/console/set-password?link=\(link)")
        XCTAssertEqual(page.status, 200, page.text)
        XCTAssertTrue(page.text.contains(name))
        let set = try await post(client, "/console/set-password", ["link": link, "password": password, "confirm": password])
        XCTAssertEqual(set.status, 303, set.text)
        XCTAssertEqual(set.header("Location"), "/console/sign-in?done=1")
        let signedIn = try await post(client, "/console/sign-in", ["name": name, "password": password])
        XCTAssertEqual(signedIn.status, 303, signedIn.text)
        let cookie = try XCTUnwrap(signedIn.header("Set-Cookie"))
        XCTAssertTrue(cookie.contains("HttpOnly"), cookie)
        XCTAssertTrue(cookie.contains("SameSite=Strict"), cookie)
        XCTAssertTrue(cookie.contains("Path=/console"), cookie)
        let value = String(cookie.split(separator: ";")[0].dropFirst("sniffmeet_console=".count))
        let reports = try await client.send(.get, "/console/reports", headers: ["Cookie": "sniffmeet_console=\(value)"])
        XCTAssertEqual(reports.status, 200, reports.text)
        return Operator(name: name, cookie: value, csrf: try XCTUnwrap(csrf(in: reports.text)))
    }

    static func csrf(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    /// Ben (dog `<b>Rex</b>`) reported by Ana with a hostile note; returns (ana, ben, report id).
    static func reported(_ client: GatewayFixture.Client) async throws -> (GatewayFixture.User, GatewayFixture.User, String) {
        let ana = try await client.signUp("ana")
        let ben = try await client.signUp("ben", dog: rex)
        // Only someone met can be reported.
        try await client.makeMates(ana, ben)
        let filed = try await client.send(
            .post,
            "/v1/reports",
            token: ana.token,
            json: #"{"user_id": "\#(ben.id)", "reason": "harassment", "note": "<img src=x onerror=alert(1)>"}"#
        )
        XCTAssertEqual(filed.status, 201, filed.text)
        // The page reads the read model: wait until it has the report.
        var waited = 0
        while try client.sql("SELECT count(*) FROM reports")[0][0] != "1", waited < 200 {
            try await Task.sleep(for: .milliseconds(20))
            waited += 1
        }
        return (ana, ben, try XCTUnwrap(filed.json["report_id"] as? String))
    }

    static func assertSecure(_ reply: GatewayFixture.Reply, file: StaticString = #filePath, line: UInt = #line) {
        let policy = reply.header("Content-Security-Policy") ?? ""
        XCTAssertTrue(policy.contains("default-src 'none'"), policy, file: file, line: line)
        XCTAssertTrue(policy.contains("style-src 'self'"), policy, file: file, line: line)
        XCTAssertFalse(policy.contains("unsafe-inline"), policy, file: file, line: line)
        XCTAssertEqual(reply.header("X-Frame-Options"), "DENY", file: file, line: line)
        XCTAssertEqual(reply.header("X-Content-Type-Options"), "nosniff", file: file, line: line)
        XCTAssertEqual(reply.header("Referrer-Policy"), "same-origin", file: file, line: line)
    }

    func testSignedOutEveryConsolePageIsTheSignInRedirect() async throws {
        try await GatewayFixture("console_signed_out").run { client in
            let (_, ben, reportID) = try await Self.reported(client)
            let gets = [
                "/console", "/console/reports", "/console/users/\(ben.id)", "/console/audit", "/console/projections", "/console/push",
                "/console/charts/lag/safety", "/console/charts/push", "/console/nothing/here",
            ]
            let posts = [
                "/console/sign-out", "/console/reports/\(reportID)/resolve", "/console/users/\(ben.id)/suspend",
                "/console/users/\(ben.id)/lift",
            ]
            for cookie in [nil, "sniffmeet_console=forged-forged-forged-forged-forged"] {
                let headers = cookie.map { ["Cookie": $0] } ?? [:]
                for path in gets {
                    let reply = try await client.send(.get, path, headers: headers)
                    XCTAssertEqual(reply.status, 303, path)
                    XCTAssertEqual(reply.header("Location"), "/console/sign-in", path)
                    XCTAssertTrue(reply.body.isEmpty, path)
                    Self.assertSecure(reply)
                }
                for path in posts {
                    let reply = try await Self.post(client, path, ["reason": "spam", "csrf": "x"], headers: headers)
                    XCTAssertEqual(reply.status, 303, path)
                    XCTAssertEqual(reply.header("Location"), "/console/sign-in", path)
                    XCTAssertTrue(reply.body.isEmpty, path)
                }
            }
            let signInPage = try await client.send(.get, "/console/sign-in")
            XCTAssertEqual(signInPage.status, 200)
            XCTAssertFalse(signInPage.text.contains("Rex"))
            Self.assertSecure(signInPage)
            let css = try await client.send(.get, "/console/console.css")
            XCTAssertEqual(css.status, 200)
            XCTAssertEqual(css.header("Content-Type"), "text/css; charset=utf-8")
            XCTAssertEqual(try client.sql("SELECT status FROM reports")[0][0], "open")
        }
    }

    func testReportsShowWhatUsersWroteAsText() async throws {
        try await GatewayFixture("console_escaping").run { client in
            let (ana, ben, reportID) = try await Self.reported(client)
            let mina = try await Self.signIn(client)
            let page = try await client.send(.get, "/console/reports", headers: mina.headers)
            XCTAssertEqual(page.status, 200)
            Self.assertSecure(page)
            XCTAssertTrue(page.text.contains(reportID))
            XCTAssertTrue(page.text.contains("&lt;b&gt;Rex&lt;/b&gt;"), page.text)
            XCTAssertTrue(page.text.contains("&lt;img src=x onerror=alert(1)&gt;"), page.text)
            XCTAssertFalse(page.text.contains(Self.rex))
            XCTAssertFalse(page.text.contains("<img src=x"))
            XCTAssertFalse(page.text.contains("<script"))
            XCTAssertFalse(page.text.contains(">nil<"), "an absent value shows as nothing")
            XCTAssertFalse(page.text.contains("\"nil\""), "an absent photo is no image")
            let user = try await client.send(.get, "/console/users/\(ben.id)", headers: mina.headers)
            XCTAssertEqual(user.status, 200)
            XCTAssertTrue(user.text.contains("&lt;b&gt;Rex&lt;/b&gt;"))
            XCTAssertTrue(user.text.contains("&lt;img src=x onerror=alert(1)&gt;"))
            XCTAssertFalse(user.text.contains(Self.rex))
            let reporter = try await client.send(.get, "/console/users/\(ana.id)", headers: mina.headers)
            XCTAssertTrue(reporter.text.contains(reportID), "reports by them")
            let value1 = try await client.send(.get, "/console/users/\(UUID())", headers: mina.headers).status
            XCTAssertEqual(value1, 404)
            let value2 = try await client.send(.get, "/console/users/not-a-uuid", headers: mina.headers).status
            XCTAssertEqual(value2, 404)
            let value3 = try await client.send(.get, "/console/reports?after=zzz", headers: mina.headers).status
            XCTAssertEqual(value3, 400)
            for path in ["/console/audit", "/console/projections", "/console/push"] {
                let reply = try await client.send(.get, path, headers: mina.headers)
                XCTAssertEqual(reply.status, 200, path)
                Self.assertSecure(reply)
            }
            for path in ["/console/charts/lag/safety", "/console/charts/push"] {
                let chart = try await client.send(.get, path, headers: mina.headers)
                XCTAssertEqual(chart.status, 200, path)
                XCTAssertEqual(chart.header("Content-Type"), "image/svg+xml")
                XCTAssertTrue(chart.text.hasPrefix("<svg"), chart.text)
                XCTAssertFalse(chart.text.contains("style="))
            }
            let value4 = try await client.send(.get, "/console/charts/lag/nope", headers: mina.headers).status
            XCTAssertEqual(value4, 404)
        }
    }

    func testAReportedMessageIsShownAsTextUntilUnsent() async throws {
        try await GatewayFixture("console_message").run { client in
            let ann = try await client.signUp("cmann")
            let bob = try await client.signUp("cmbob")
            try await client.makeMates(ann, bob)
            let sent = try await client.send(
                .post,
                "/v1/chats/\(ann.id)/messages",
                token: bob.token,
                json: #"{"text": "<i>Wombatrude</i> 7"}"#
            )
            XCTAssertEqual(sent.status, 201, sent.text)
            let messageID = try XCTUnwrap(sent.json["message_id"] as? String)
            let filed = try await client.send(
                .post,
                "/v1/reports",
                token: ann.token,
                json: #"{"user_id": "\#(bob.id)", "reason": "harassment", "message_id": "\#(messageID)"}"#
            )
            XCTAssertEqual(filed.status, 201, filed.text)
            let reportID = try XCTUnwrap(filed.json["report_id"] as? String)
            let mina = try await Self.signIn(client)
            var page = try await client.send(.get, "/console/reports", headers: mina.headers)
            for _ in 0..<50 where !page.text.contains("Wombatrude") {
                try await Task.sleep(nanoseconds: 100_000_000)
                page = try await client.send(.get, "/console/reports", headers: mina.headers)
            }
            XCTAssertEqual(page.status, 200)
            XCTAssertTrue(page.text.contains("&lt;i&gt;Wombatrude&lt;/i&gt; 7"), page.text)
            XCTAssertFalse(page.text.contains("<i>Wombatrude"))

            let unsent = try await client.send(.delete, "/v1/chats/\(ann.id)/messages/\(messageID)", token: bob.token)
            XCTAssertEqual(unsent.status, 200, unsent.text)
            for _ in 0..<50 where page.text.contains("Wombatrude") {
                try await Task.sleep(nanoseconds: 100_000_000)
                page = try await client.send(.get, "/console/reports", headers: mina.headers)
            }
            XCTAssertEqual(page.status, 200)
            XCTAssertTrue(page.text.contains(reportID))
            XCTAssertFalse(page.text.contains("Wombatrude"), "an unsent message's text is shown to operators")
        }
    }

    func testFormsNeedTheirCSRFTokenAndThisSitesOrigin() async throws {
        try await GatewayFixture("console_csrf").run { client in
            let (_, ben, reportID) = try await Self.reported(client)
            let mina = try await Self.signIn(client)
            let events = try client.sql("SELECT count(*) FROM events")[0][0]
            let resolve = "/console/reports/\(reportID)/resolve"
            let missing = try await Self.post(client, resolve, [:], headers: mina.headers)
            XCTAssertEqual(missing.status, 403)
            Self.assertSecure(missing)
            let value5 = try await Self.post(client, resolve, ["csrf": "wrong"], headers: mina.headers).status
            XCTAssertEqual(value5, 403)
            let foreign = try await Self.post(
                client,
                resolve,
                ["csrf": mina.csrf],
                headers: mina.headers.merging(["Origin": "https://evil.example"]) { _, new in new }
            )
            XCTAssertEqual(foreign.status, 403)
            let crossSite = try await Self.post(
                client,
                "/console/users/\(ben.id)/suspend",
                ["csrf": mina.csrf, "reason": "spam"],
                headers: mina.headers.merging(["Sec-Fetch-Site": "cross-site"]) { _, new in new }
            )
            XCTAssertEqual(crossSite.status, 403)
            let value6 = try await Self.post(
                client,
                "/console/sign-in",
                ["name": "mina", "password": Self.password],
                headers: ["Origin": "https://evil.example"]
            ).status
            XCTAssertEqual(value6, 403)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0], events, "a refused form wrote something")
            // GET never acts: an action's path is no page.
            let got = try await client.send(.get, resolve, headers: mina.headers)
            XCTAssertEqual(got.status, 404)
            Self.assertSecure(got)
            let unknown = try await client.send(.get, "/console/nothing/here", headers: mina.headers)
            XCTAssertEqual(unknown.status, 404)
            XCTAssertEqual(unknown.header("Content-Type"), "text/html; charset=utf-8")
            Self.assertSecure(unknown)
            XCTAssertEqual(try client.sql("SELECT status FROM reports")[0][0], "open")

            let done = try await Self.post(
                client,
                resolve,
                ["csrf": mina.csrf],
                headers: mina.headers.merging(["Origin": "http://127.0.0.1:8080"]) { _, new in new }
            )
            XCTAssertEqual(done.status, 303, done.text)
            XCTAssertEqual(try client.sql("SELECT status FROM reports")[0][0], "resolved")
        }
    }

    func testEveryActionIsAnEventNamingItsOperator() async throws {
        try await GatewayFixture("console_actions").run { client in
            let (_, ben, reportID) = try await Self.reported(client)
            let mina = try await Self.signIn(client)
            let value8 = try await client.send(.get, "/v1/me", token: ben.token).status
            XCTAssertEqual(value8, 200)
            let suspended = try await Self.post(
                client,
                "/console/users/\(ben.id)/suspend",
                ["csrf": mina.csrf, "reason": "threats"],
                headers: mina.headers
            )
            XCTAssertEqual(suspended.status, 303, suspended.text)
            XCTAssertEqual(suspended.header("Location"), "/console/users/\(ben.id)")
            // The page the action leads to already shows it.
            let page = try await client.send(.get, "/console/users/\(ben.id)", headers: mina.headers)
            XCTAssertTrue(page.text.contains("Lift the suspension"), page.text)
            let value9 = try await client.send(.get, "/v1/me", token: ben.token).status
            XCTAssertEqual(value9, 401)
            let value10 = try await Self.post(
                client,
                "/console/users/\(ben.id)/suspend",
                ["csrf": mina.csrf, "reason": " "],
                headers: mina.headers
            ).status
            XCTAssertEqual(value10, 400)
            let value11 = try await Self.post(client, "/console/users/\(ben.id)/lift", ["csrf": mina.csrf], headers: mina.headers).status
            XCTAssertEqual(value11, 303)
            let value12 = try await Self.post(client, "/console/reports/\(reportID)/resolve", ["csrf": mina.csrf], headers: mina.headers)
                .status
            XCTAssertEqual(value12, 303)
            let recorded = try client.sql(
                "SELECT event_type, data->>'operator' FROM events WHERE event_type IN ('user_suspended', 'user_unsuspended', 'report_resolved') ORDER BY position"
            )
            XCTAssertEqual(recorded.map { $0[0] }, ["user_suspended", "user_unsuspended", "report_resolved"])
            XCTAssertEqual(recorded.map { $0[1] }, ["mina", "mina", "mina"])
            // The audit log lists them, newest first, once its projector has them.
            var audit = try await client.send(.get, "/console/audit", headers: mina.headers)
            var waited = 0
            while !audit.text.contains(">suspend<") || !audit.text.contains(">resolve<"), waited < 200 {
                try await Task.sleep(for: .milliseconds(20))
                audit = try await client.send(.get, "/console/audit", headers: mina.headers)
                waited += 1
            }
            XCTAssertEqual(audit.status, 200)
            let rows = try client.sql("SELECT operator, action FROM operator_actions ORDER BY at, action")
            XCTAssertEqual(Set(rows.map { $0[1]! }), ["suspend", "lift", "resolve"])
            XCTAssertEqual(Set(rows.map { $0[0]! }), ["mina"])
            XCTAssertTrue(audit.text.contains(#"<td class="operator">mina</td><td class="action">suspend</td>"#), audit.text)
            XCTAssertTrue(audit.text.contains(#"<td class="operator">mina</td><td class="action">lift</td>"#))
            XCTAssertTrue(audit.text.contains(#"<td class="operator">mina</td><td class="action">resolve</td>"#))
        }
    }

    func testTheAdminTokenIsOperatorAdminAndOperatorTokensOpenTheJSONRoutes() async throws {
        try await GatewayFixture("console_tokens").run { client in
            let (_, ben, reportID) = try await Self.reported(client)
            let owner = try Connection(connectionString: client.ownerURL)
            _ = try OperatorStore.add("jun", on: owner)
            let token = try OperatorStore.issueToken("jun", on: owner)
            let value13 = try await client.send(.get, "/v1/admin/reports", token: token).status
            XCTAssertEqual(value13, 200)
            let value14 = try await client.send(.post, "/v1/admin/reports/\(reportID)/resolve", token: token).status
            XCTAssertEqual(value14, 200)
            let suspend = try await client.send(
                .post,
                "/v1/admin/users/\(ben.id)/suspend",
                token: "admin-secret",
                json: #"{"reason": "spam"}"#
            )
            XCTAssertEqual(suspend.status, 204, suspend.text)
            let recorded = try client.sql(
                "SELECT event_type, data->>'operator' FROM events WHERE event_type IN ('user_suspended', 'report_resolved') ORDER BY position"
            )
            XCTAssertEqual(recorded.map { $0[1] }, ["jun", "admin"])
            try OperatorStore.remove("jun", on: owner)
            let value15 = try await client.send(.get, "/v1/admin/reports", token: token)
            XCTAssertError(value15, 401, "unauthorized")
            let value16 = try await client.send(.get, "/v1/admin/reports", token: "not-a-token-of-anyone-at-all")
            XCTAssertError(value16, 401, "unauthorized")
        }
    }

    func testSignInIsRateLimitedPerNameAndAddress() async throws {
        try await GatewayFixture("console_rate") { $0.console.signInBurst = 3 }.run { client in
            let mina = try await Self.signIn(client)
            for _ in 0..<2 {
                let wrong = try await Self.post(client, "/console/sign-in", ["name": "mina", "password": "wrong password!"])
                XCTAssertEqual(wrong.status, 401)
                XCTAssertNil(wrong.header("Set-Cookie"))
                Self.assertSecure(wrong)
            }
            let value17 = try await Self.post(client, "/console/sign-in", ["name": "nobody", "password": "wrong password!"]).status
            XCTAssertEqual(value17, 401)
            // Budgets spent: even the right password waits now.
            let limited = try await Self.post(client, "/console/sign-in", ["name": mina.name, "password": Self.password])
            XCTAssertEqual(limited.status, 429, limited.text)
            XCTAssertNil(limited.header("Set-Cookie"))
        }
    }

    func testSessionsEndOnSignOutExpiryAndRemoval() async throws {
        try await GatewayFixture("console_sessions").run { client in
            let mina = try await Self.signIn(client, "mina")
            let out = try await Self.post(client, "/console/sign-out", ["csrf": mina.csrf], headers: mina.headers)
            XCTAssertEqual(out.status, 303)
            XCTAssertTrue(out.header("Set-Cookie")?.contains("Max-Age=0") == true)
            let value18 = try await client.send(.get, "/console/reports", headers: mina.headers).header("Location")
            XCTAssertEqual(value18, "/console/sign-in")

            let again = try await Self.post(client, "/console/sign-in", ["name": "mina", "password": Self.password])
            let cookie = String(again.header("Set-Cookie")!.split(separator: ";")[0])
            let value19 = try await client.send(.get, "/console/reports", headers: ["Cookie": cookie]).status
            XCTAssertEqual(value19, 200)
            _ = try client.sql("UPDATE console_sessions SET expires_at = now() - interval '1 second'")
            let value20 = try await client.send(.get, "/console/reports", headers: ["Cookie": cookie]).status
            XCTAssertEqual(value20, 303)

            let jun = try await Self.signIn(client, "jun")
            try OperatorStore.remove("jun", on: try Connection(connectionString: client.ownerURL))
            let value21 = try await client.send(.get, "/console/reports", headers: jun.headers).status
            XCTAssertEqual(value21, 303)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM console_sessions WHERE name = 'jun'")[0][0], "0")
        }
    }

    func testPasswordLinksAreOneTimeAndExpire() async throws {
        try await GatewayFixture("console_links").run { client in
            let owner = try Connection(connectionString: client.ownerURL)
            let link = try OperatorStore.add("mina", on: owner)
            XCTAssertThrowsError(try OperatorStore.add("mina", on: owner))
            XCTAssertThrowsError(try OperatorStore.add("admin", on: owner))
            XCTAssertThrowsError(try OperatorStore.add("Bad Name", on: owner))
            let short = try await Self.post(client, "/console/set-password", ["link": link, "password": "short", "confirm": "short"])
            XCTAssertEqual(short.status, 400)
            let set = try await Self.post(
                client,
                "/console/set-password",
                ["link": link, "password": Self.password, "confirm": Self.password]
            )
            XCTAssertEqual(set.status, 303)
            let reused = try await Self.post(
                client,
                "/console/set-password",
                ["link": link, "password": "another long one", "confirm": "another long one"]
            )
            XCTAssertEqual(reused.status, 410)
            let value22 = try await client.send(.get, "/console/set-password?link=\(link)").status
            XCTAssertEqual(value22, 410)

            let late = try OperatorStore.add("jun", on: owner)
            _ = try client.sql("UPDATE operator_links SET expires_at = now() - interval '1 second'")
            let value23 = try await client.send(.get, "/console/set-password?link=\(late)").status
            XCTAssertEqual(value23, 410)
            let hash = try client.sql("SELECT password_hash FROM operators WHERE name = 'mina'")[0][0] ?? ""
            XCTAssertTrue(hash.hasPrefix("scrypt$"), hash)
            XCTAssertFalse(hash.contains(Self.password))
        }
    }
}
