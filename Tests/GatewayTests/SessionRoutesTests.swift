@preconcurrency import Crypto
import Foundation
import Gateway
import Postgres
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Sessions and devices (API.md): transfer codes, signing in on a new phone, listing and
/// signing out sessions, device tokens belonging to sessions.
final class SessionRoutesTests: XCTestCase {
    static let deviceToken = String(repeating: "c0ffee", count: 11)

    /// `last_seen_at` moves after the first request that follows a minute without one (written in
    /// the background, `LastSeenMoves`), not on every request.
    func testLastSeenMovesOnTheFirstRequestAfterAMinute() async throws {
        try await GatewayFixture("sessions_last_seen").run { client in
            let mia = try await client.signUp("Mia", dog: "Bori")
            let age = "SELECT extract(epoch FROM now() - last_seen_at)::int FROM sessions WHERE user_id = $1::uuid"
            _ = try client.sql("UPDATE sessions SET last_seen_at = now() - interval '30 seconds' WHERE user_id = $1::uuid", [mia.id])
            // The session cache emptied (as by any announced sign-out): the request looks the token
            // up again and learns how long ago it was seen.
            try await Self.emptySessionCache(client)
            let recent = try await client.profileStatus(token: mia.token)
            XCTAssertEqual(recent, 200)
            XCTAssertGreaterThanOrEqual(Int(try client.sql(age, [mia.id])[0][0] ?? "")!, 30, "within the minute: unmoved")

            _ = try client.sql("UPDATE sessions SET last_seen_at = now() - interval '5 minutes' WHERE user_id = $1::uuid", [mia.id])
            try await Self.emptySessionCache(client)
            // Written in the background within a second or so. Asked again meanwhile: should the
            // announcement reach the process after a request, that request was still answered
            // from the cache (where the move is not due yet); a later one reads the session.
            var seconds = Int.max
            for _ in 0..<50 where seconds >= 10 {
                let status = try await client.send(.get, "/v1/me", token: mia.token).status
                XCTAssertEqual(status, 200)
                try await Task.sleep(for: .milliseconds(100))
                seconds = Int(try client.sql(age, [mia.id])[0][0] ?? "")!
            }
            XCTAssertLessThan(seconds, 10, "after a pause: moved to now")
        }
    }

    /// A sign-up caches the session it opened: the new user's next requests are answered from
    /// the cache (here shown by a row removed behind the server's back, without the announcement
    /// every real revocation makes), until an announcement empties it.
    func testASignUpCachesTheSessionItOpened() async throws {
        try await GatewayFixture("sessions_signup_cached").run { client in
            // The process's listener connects first (a connect empties the cache).
            try await Self.waitForTheListener(client)
            let mia = try await client.signUp("Mia", dog: "Bori")
            _ = try client.sql("DELETE FROM sessions WHERE user_id = $1::uuid", [mia.id])
            let cached = try await client.send(.get, "/v1/me/mates", token: mia.token)
            XCTAssertEqual(cached.status, 200, "answered from the cache the sign-up filled")
            try await Self.emptySessionCache(client)
            // Read again once emptied: the session is gone (asked until the announcement is in).
            var read = 0
            for _ in 0..<100 where read != 401 {
                read = try await client.send(.get, "/v1/me/mates", token: mia.token).status
                if read != 401 { try await Task.sleep(for: .milliseconds(50)) }
            }
            XCTAssertEqual(read, 401, "read again once emptied: the session is gone")
        }
    }

    /// Returns once the process's listener has connected and listens (up to five seconds), and
    /// a moment more for what it does on connecting.
    private static func waitForTheListener(_ client: GatewayFixture.Client) async throws {
        let listening = try await client.listeners()
        XCTAssertEqual(listening, 1, "the process's listener")
        try await Task.sleep(for: .milliseconds(200))
    }

    /// Announces a revocation of no session: every process empties its session cache.
    private static func emptySessionCache(_ client: GatewayFixture.Client) async throws {
        _ = try client.sql("SELECT pg_notify('\(SessionStore.revocations)', 'none')")
        try await Task.sleep(for: .milliseconds(300))
    }

    func testATransferCodeSignsTheAccountInOnANewPhoneOnce() async throws {
        try await GatewayFixture("sessions_transfer").run { client in
            let mia = try await client.signUp("Mia", dog: "Bori")
            let issued = try await client.send(.post, "/v1/me/transfer-codes", token: mia.token)
            XCTAssertEqual(issued.status, 201, issued.text)
            let code = try XCTUnwrap(issued.json["transfer_code"] as? String)
            XCTAssertNotNil(code.wholeMatch(of: /[A-Z2-7]{26}/), code)
            XCTAssertNotNil(issued.json["expires_at"] as? String)
            // Only its SHA-256 is stored.
            XCTAssertEqual(
                try client.sql("SELECT count(*) FROM transfer_codes WHERE code_hash = sha256(convert_to($1, 'UTF8'))", [code])[0][0],
                "1"
            )
            XCTAssertTrue(try client.sql("SELECT encode(code_hash, 'escape') FROM transfer_codes").allSatisfy { $0[0] != code })

            // Typed by hand: case, spaces and dashes do not matter.
            let typed = code.lowercased().enumerated().map { $0.offset % 5 == 4 ? "\($0.element)-" : "\($0.element)" }.joined()
            let signedIn = try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(typed)"}"#)
            XCTAssertEqual(signedIn.status, 201, signedIn.text)
            XCTAssertEqual(signedIn.json["user_id"] as? String, mia.id)
            let profile = try XCTUnwrap(signedIn.json["profile"] as? [String: Any])
            XCTAssertEqual(profile["dog_name"] as? String, "Bori")
            let phone2 = try XCTUnwrap(signedIn.json["token"] as? String)
            XCTAssertNotEqual(phone2, mia.token)
            // The new phone's session works.
            let value1 = try await client.profileStatus(token: phone2)
            XCTAssertEqual(value1, 200)
            // Single use.
            XCTAssertError(
                try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(code)"}"#),
                403,
                "invalid_transfer_code"
            )

            // Both phones are listed, each knowing which one it is.
            let listed = try await client.send(.get, "/v1/me/sessions", token: phone2)
            XCTAssertEqual(listed.status, 200, listed.text)
            XCTAssertEqual(listed.items.count, 2)
            XCTAssertTrue(listed.json["next_cursor"] is NSNull)
            XCTAssertEqual(listed.items.map { $0["current"] as? Bool }, [true, false], "newest first")
            for item in listed.items {
                XCTAssertEqual(item["push"] as? Bool, false)
                let lastSeen = try XCTUnwrap(item["last_seen_at"] as? String)
                XCTAssertTrue(lastSeen.hasSuffix(":00.000Z"), "to the minute: \(lastSeen)")
            }
            let firstPage = try await client.send(.get, "/v1/me/sessions?limit=1", token: phone2)
            let cursor = try XCTUnwrap(firstPage.json["next_cursor"] as? String)
            let secondPage = try await client.send(.get, "/v1/me/sessions?limit=1&cursor=\(cursor)", token: phone2)
            XCTAssertEqual(secondPage.items.map { $0["session_id"] as? String }, [listed.items[1]["session_id"] as? String])
            XCTAssertError(
                try await client.send(.get, "/v1/me/sessions?cursor=forged", token: phone2),
                400,
                "validation_failed",
                field: "cursor"
            )

            // The new phone signs the old one out.
            let oldSession = try XCTUnwrap(listed.items[1]["session_id"] as? String)
            let out = try await client.send(.delete, "/v1/me/sessions/\(oldSession)", token: phone2)
            XCTAssertEqual(out.status, 204, out.text)
            XCTAssertError(try await client.send(.get, "/v1/me", token: mia.token), 401, "unauthorized")
            XCTAssertError(try await client.send(.delete, "/v1/me/sessions/\(oldSession)", token: phone2), 404, "not_found")
            // And then itself.
            let value2 = try await client.send(.delete, "/v1/me/session", token: phone2).status
            XCTAssertEqual(value2, 204)
            XCTAssertError(try await client.send(.get, "/v1/me", token: phone2), 401, "unauthorized")
            XCTAssertError(try await client.send(.delete, "/v1/me/session", token: phone2), 401, "unauthorized")
        }
    }

    func testTransferCodeErrors() async throws {
        try await GatewayFixture("sessions_errors").run { client in
            let mia = try await client.signUp("Mia")
            XCTAssertError(
                try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "AAAAAAAAAAAAAAAAAAAAAAAAAA"}"#),
                403,
                "invalid_transfer_code"
            )
            XCTAssertError(try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": ""}"#), 403, "invalid_transfer_code")
            XCTAssertError(
                try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\u0000"}"#),
                403,
                "invalid_transfer_code"
            )
            XCTAssertError(try await client.send(.post, "/v1/sessions", json: #"{"code": "x"}"#), 400, "validation_failed")
            XCTAssertError(try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": 12}"#), 400, "validation_failed")
            XCTAssertError(try await client.send(.post, "/v1/sessions", json: "{"), 400, "invalid_json")

            // Expired: spent all the same.
            let code = try await client.send(.post, "/v1/me/transfer-codes", token: mia.token).json["transfer_code"] as! String
            _ = try client.sql("UPDATE transfer_codes SET expires_at = now() - interval '1 second'")
            XCTAssertError(
                try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(code)"}"#),
                410,
                "transfer_code_expired"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(code)"}"#),
                403,
                "invalid_transfer_code"
            )

            // A replayed sign-in never shows its token again.
            let again = try await client.send(.post, "/v1/me/transfer-codes", token: mia.token).json["transfer_code"] as! String
            let key = ["Idempotency-Key": "new-phone-1"]
            let first = try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(again)"}"#, headers: key)
            XCTAssertEqual(first.status, 201, first.text)
            XCTAssertError(
                try await client.send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(again)"}"#, headers: key),
                409,
                "already_registered"
            )
            XCTAssertEqual(try client.sql("SELECT count(*) FROM sessions")[0][0], "2")

            // Someone else's session is not mine to end, and says nothing about existing.
            let leo = try await client.signUp("Leo")
            let leos = try await client.send(.get, "/v1/me/sessions", token: leo.token).items[0]["session_id"] as! String
            XCTAssertError(try await client.send(.delete, "/v1/me/sessions/\(leos)", token: mia.token), 404, "not_found")
            XCTAssertError(try await client.send(.delete, "/v1/me/sessions/\(UUID())", token: mia.token), 404, "not_found")
            XCTAssertError(try await client.send(.delete, "/v1/me/sessions/not-a-uuid", token: mia.token), 404, "not_found")
            // Leo's session still works.
            let leoStatus = try await client.profileStatus(token: leo.token)
            XCTAssertEqual(leoStatus, 200)
        }
    }

    func testTheDeviceTokenBelongsToTheSessionAndMovesWithTheDevice() async throws {
        try await GatewayFixture("sessions_devices").run { client in
            let mia = try await client.signUp("Mia")
            let phone2 = try await client.secondPhone(mia)
            func pushes(_ token: String) async throws -> [Bool] {
                // Oldest first.
                try await client.send(.get, "/v1/me/sessions", token: token).items.reversed().map { $0["push"] as! Bool }
            }
            let put = try await client.send(
                .put,
                "/v1/me/device-token",
                token: mia.token,
                json: #"{"device_token": "\#(Self.deviceToken.uppercased())", "locale": "en"}"#
            )
            XCTAssertEqual(put.status, 204, put.text)
            XCTAssertNil(put.header("Log-Position"), "device tokens are not in the log")
            let value4 = try await pushes(mia.token)
            XCTAssertEqual(value4, [true, false])
            XCTAssertEqual(try client.sql("SELECT locale FROM sessions WHERE device_token_mac IS NOT NULL")[0][0], "en")
            // Stored sealed: the table does not hold the token in any form a dump would show.
            let dump = try client.sql("SELECT s::text FROM sessions s").map { $0[0] ?? "" }.joined()
            XCTAssertFalse(dump.lowercased().contains(Self.deviceToken))
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events WHERE event_type = 'device_token_set'")[0][0], "0")

            // The same phone signed in anew (the token moves to the newer session).
            let moved = try await client.send(
                .put,
                "/v1/me/device-token",
                token: phone2,
                json: #"{"device_token": "\#(Self.deviceToken)"}"#
            )
            XCTAssertEqual(moved.status, 204, moved.text)
            let value5 = try await pushes(mia.token)
            XCTAssertEqual(value5, [false, true])
            XCTAssertEqual(try client.sql("SELECT locale FROM sessions WHERE device_token_mac IS NOT NULL")[0][0], "ko")

            let value6 = try await client.send(.delete, "/v1/me/device-token", token: phone2).status
            XCTAssertEqual(value6, 204)
            let value7 = try await pushes(mia.token)
            XCTAssertEqual(value7, [false, false])
            let value8 = try await client.send(.delete, "/v1/me/device-token", token: phone2).status
            XCTAssertEqual(value8, 204, "again: nothing to stop")

            for (body, field) in [
                (#"{"device_token": "xyz"}"#, "device_token"),
                (#"{"device_token": "\#(String(repeating: "a", count: 63))"}"#, "device_token"),
                (#"{"device_token": "\#(String(repeating: "a", count: 201))"}"#, "device_token"),
                (#"{"device_token": "\#(Self.deviceToken)", "locale": "fr"}"#, "locale"),
                (#"{"device_token": "\#(Self.deviceToken)", "locale": null}"#, "locale"),
                (#"{"locale": "ko"}"#, "device_token"),
            ] {
                XCTAssertError(
                    try await client.send(.put, "/v1/me/device-token", token: mia.token, json: body),
                    400,
                    "validation_failed",
                    field: field
                )
            }
            XCTAssertError(try await client.send(.put, "/v1/me/device-token", token: mia.token, json: "[]"), 400, "validation_failed")
        }
    }

    /// What the push service will read: the sealed device token opens back to the one the phone
    /// sent (lowercased), for the session that holds it and no other.
    func testTheStoredDeviceTokenOpensBackForItsSessionOnly() async throws {
        let fixture = try GatewayFixture("sessions_device_read")
        try await fixture.run { client in
            let mia = try await client.signUp("Mia")
            let put = try await client.send(
                .put,
                "/v1/me/device-token",
                token: mia.token,
                json: #"{"device_token": "\#(Self.deviceToken.uppercased())"}"#
            )
            XCTAssertEqual(put.status, 204, put.text)
            let listed = try await client.send(.get, "/v1/me/sessions", token: mia.token)
            let session = try XCTUnwrap(UUID(uuidString: listed.items.first?["session_id"] as? String ?? ""))
            let pool = ConnectionPool(connectionString: fixture.configuration.databaseURL, maxConnections: 2)
            let store = SessionStore(pool: pool, gate: DatabaseGate(limit: 8), secret: fixture.configuration.secret)
            let opened = try await store.deviceToken(of: session)
            XCTAssertEqual(opened, Self.deviceToken)
            let none = try await store.deviceToken(of: UUID())
            XCTAssertNil(none)
            // Under another master key it does not open.
            let stranger = SessionStore(pool: pool, gate: DatabaseGate(limit: 8), secret: SymmetricKey(size: .bits256))
            do {
                _ = try await stranger.deviceToken(of: session)
                XCTFail("a device token opened under another master key")
            } catch {}
            await pool.close()
        }
    }

    /// A token signed out on one server process gets 401 from another process on the same
    /// database within a second (DESIGN.md, "Sessions").
    func testASignedOutTokenIsRefusedByASecondServeProcessWithinOneSecond() async throws {
        let fixture = try GatewayFixture("sessions_two_processes")
        let server = try ServeProcess.start(fixture)
        defer { server.stop() }
        try await fixture.run { client in
            let mia = try await client.signUp("Mia")
            let phone2 = try await client.secondPhone(mia)
            try await server.waitUntilReady()
            // The other process knows both tokens (and caches them).
            for token in [mia.token, phone2] {
                for _ in 0..<3 {
                    let value9 = try await server.status("/v1/me", token: token)
                    XCTAssertEqual(value9, 200)
                }
            }
            // Signed out here: refused there within a second.
            let value10 = try await client.send(.delete, "/v1/me/session", token: mia.token).status
            XCTAssertEqual(value10, 204)
            let signedOut = ContinuousClock.now
            var status = 200
            while status == 200, ContinuousClock.now - signedOut < .seconds(3) {
                status = try await server.status("/v1/me", token: mia.token)
                if status == 200 { try await Task.sleep(for: .milliseconds(20)) }
            }
            let took = ContinuousClock.now - signedOut
            XCTAssertEqual(status, 401)
            XCTAssertLessThan(took, .seconds(1), "revocation reached the other process after \(took)")
            print("SessionRoutesTests: a sign-out reached the second serve process after \(took)")
            // Revoking another device works the same way; the remaining phone still works there.
            let value11 = try await server.status("/v1/me", token: phone2)
            XCTAssertEqual(value11, 200)
            let sessions = try await client.send(.get, "/v1/me/sessions", token: phone2)
            XCTAssertEqual(sessions.items.count, 1)
        }
    }
}

/// `sniffmeet serve` as a separate process on a fixture's database: the executable the package
/// builds, with the fixture's logins and master key.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    let port: Int

    static func start(_ fixture: GatewayFixture, environment extra: [String: String] = [:]) throws -> ServeProcess {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let binary = root.appendingPathComponent(".build/debug/sniffmeet").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw XCTSkip("the sniffmeet executable is not built at \(binary); run `swift build` first")
        }
        let server = ServeProcess(port: try freePort())
        server.process.executableURL = URL(fileURLWithPath: binary)
        server.process.arguments = ["serve", "--port", "\(server.port)"]
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = fixture.configuration.databaseURL
        environment["MIGRATION_DATABASE_URL"] = fixture.ownerURL
        environment["SNIFFMEET_MASTER_KEY"] = fixture.configuration.secret.withUnsafeBytes { Data($0).base64EncodedString() }
        environment["SNIFFMEET_RATE_LIMITS"] = "off"
        environment["LOG_LEVEL"] = "warning"
        environment.merge(extra) { _, new in new }
        server.process.environment = environment
        server.process.standardOutput = FileHandle.nullDevice
        try server.process.run()
        return server
    }

    private init(port: Int) { self.port = port }

    /// A port no socket holds now, as the kernel picks one for a socket bound to port 0 (a random
    /// one could be a port another test's connection uses).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// `kill -9`: no shutdown of any kind.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// The status of `GET path` on this process.
    func status(_ path: String, token: String? = nil) async throws -> Int {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.timeoutInterval = 5
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as! HTTPURLResponse).statusCode
    }

    func waitUntilReady() async throws {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(60) {
            XCTAssertTrue(process.isRunning, "sniffmeet serve exited")
            if (try? await status("/readyz")) == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTFail("sniffmeet serve did not become ready")
    }
}
