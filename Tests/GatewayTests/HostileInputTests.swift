import Foundation
import Gateway
import HTTPTypes
import HummingbirdTesting
import Postgres
import XCTest

/// Requests a hostile client sends. Each gets its 4xx with a stable code, never a 5xx, and
/// writes nothing.
final class HostileInputTests: XCTestCase {
    /// Every text field of every body, with characters the API refuses.
    func testControlAndInvisibleCharactersInEveryTextFieldAreRefused() async throws {
        try await GatewayFixture("hostiletext").run { client in
            let a = try await client.signUp("writer")
            let b = try await client.signUp("reader")
            try await client.makeMates(a, b)
            let events = try client.sql("SELECT count(*) FROM events")[0][0]
            let bad = [#"\u0000"#, #"\u0007"#, #"\u001b"#, #"\u007f"#, #"\u0085"#, #"\u202e"#, #"\u2066"#, #"\u0378"#, #"\n"#]
            for char in bad {
                XCTAssertError(
                    try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "ev\(char)l")),
                    400,
                    "validation_failed",
                    field: "nickname"
                )
                XCTAssertError(
                    try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "evil", dog: "Bo\(char)")),
                    400,
                    "validation_failed",
                    field: "dog_name"
                )
                XCTAssertError(
                    try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "evil", image: "p\(char)")),
                    400,
                    "validation_failed",
                    field: "profile_image"
                )
                XCTAssertError(
                    try await client.send(.patch, "/v1/me", token: a.token, json: #"{"nickname": "ab\#(char)"}"#),
                    400,
                    "validation_failed",
                    field: "nickname"
                )
                XCTAssertError(
                    try await client.send(.patch, "/v1/me", token: a.token, json: #"{"dog_name": "x\#(char)"}"#),
                    400,
                    "validation_failed",
                    field: "dog_name"
                )
                XCTAssertError(
                    try await client.send(.post, "/v1/walks", token: a.token, json: Self.walk(to: b, message: "Hi\(char)")),
                    400,
                    "validation_failed",
                    field: "message"
                )
                XCTAssertError(
                    try await client.send(.post, "/v1/walks", token: a.token, json: Self.walk(to: b, place: "P\(char)")),
                    400,
                    "validation_failed",
                    field: "place_name"
                )
            }
            // A NUL where no text rule applies (a drop token) is refused before it reaches SQL.
            let drop = try await client.send(
                .post,
                "/v1/mate-requests",
                token: a.token,
                json: #"{"to": "\#(b.id)", "drop_token": "abc\u0000def"}"#
            )
            XCTAssertTrue((400..<500).contains(drop.status), drop.text)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0], events, "refused requests write nothing")
        }
    }

    func testCombiningMarkFloodsAreRefused() async throws {
        try await GatewayFixture("hostilezalgo").run { client in
            let a = try await client.signUp("zalgo")
            let b = try await client.signUp("plain")
            try await client.makeMates(a, b)
            let flood = "a" + String(repeating: #"\u0301"#, count: 300)
            XCTAssertError(
                try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "zz", dog: flood)),
                400,
                "validation_failed",
                field: "dog_name"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "z\(flood)")),
                400,
                "validation_failed",
                field: "nickname"
            )
            XCTAssertError(
                try await client.send(.post, "/v1/walks", token: a.token, json: Self.walk(to: b, message: flood)),
                400,
                "validation_failed",
                field: "message"
            )
        }
    }

    /// `ＡＢ`, `ab` and `Ab` are one nickname, so are NFC and NFD `josé` and `멍멍`; Latin mixed
    /// with Cyrillic is refused; Hangul works.
    func testNicknameTwinsAreOneNickname() async throws {
        try await GatewayFixture("hostiletwins").run { client in
            _ = try await client.signUp("ab")
            for twin in ["ＡＢ", "Ab", "AB"] {
                XCTAssertError(try await client.send(.post, "/v1/users", json: Self.signUp(nickname: twin)), 409, "nickname_taken")
            }
            let nfc = try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "jos\u{E9}"))
            XCTAssertEqual(nfc.status, 201, nfc.text)
            XCTAssertError(try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "jose\u{301}")), 409, "nickname_taken")
            XCTAssertError(try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "JOSÉ")), 409, "nickname_taken")
            let hangul = try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "멍멍"))
            XCTAssertEqual(hangul.status, 201, hangul.text)
            XCTAssertError(
                try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "멍멍".decomposedStringWithCanonicalMapping)),
                409,
                "nickname_taken"
            )
            let bori = try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "보리"))
            XCTAssertEqual(bori.status, 201, bori.text)
            XCTAssertEqual((bori.json["profile"] as? [String: Any])?["nickname"] as? String, "보리")
            // Cyrillic а (U+0430) among Latin letters.
            XCTAssertError(
                try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "p\u{430}ypal")),
                400,
                "validation_failed",
                field: "nickname"
            )
            // Stored NFC: the NFD sign-up of a new name comes back composed.
            let nfd = try await client.send(.post, "/v1/users", json: Self.signUp(nickname: "rene\u{301}"))
            XCTAssertEqual(nfd.status, 201, nfd.text)
            XCTAssertEqual((nfd.json["profile"] as? [String: Any])?["nickname"] as? String, "ren\u{E9}")
        }
    }

    /// Forged cursors of every list: out-of-range times, negative positions, garbage, huge.
    func testForgedCursorsOfEveryListAre400() async throws {
        try await GatewayFixture("hostilecursor").run { client in
            let a = try await client.signUp("cursor")
            let uuid = UUID().uuidString.lowercased()
            let forged =
                [
                    "-9223372036854775808|\(uuid)", "9223372036854775807|\(uuid)", "253402300800000000|\(uuid)",
                    "1|not-a-uuid", "|", "x", "1|2|3", "-1|-1", "18446744073709551616|1", "1|-5",
                ]
                .map { Self.base64url($0) } + ["!!!", String(repeating: "A", count: 400), "%00", "AAAA===="]
            for list in ["/v1/me/mates", "/v1/me/walks", "/v1/me/mate-requests", "/v1/me/notifications"] {
                for cursor in forged {
                    let reply = try await client.send(.get, "\(list)?cursor=\(cursor)", token: a.token)
                    XCTAssertError(reply, 400, "validation_failed", field: "cursor")
                }
            }
        }
    }

    /// Numbers that are not numbers, or too big for any field.
    func testNonNumericAndHugeNumbersAre400() async throws {
        try await GatewayFixture("hostilenumbers").run { client in
            let a = try await client.signUp("numbers")
            let b = try await client.signUp("counter")
            try await client.makeMates(a, b)
            for limit in ["abc", "1e99", "99999999999999999999", "-1", "0", "101", "1.5", "%20"] {
                XCTAssertError(
                    try await client.send(.get, "/v1/me/mates?limit=\(limit)", token: a.token),
                    400,
                    "validation_failed",
                    field: "limit"
                )
            }
            for age in ["1e400", "99999999999999999999", "-99999999999999999999", "3.5", "\"3\"", "null"] {
                let reply = try await client.send(
                    .post,
                    "/v1/users",
                    json: Self.signUp(nickname: "nums").replacingOccurrences(of: #""age": 3"#, with: #""age": \#(age)"#)
                )
                XCTAssertEqual(reply.status, 400, "\(age): \(reply.text)")
                XCTAssertTrue(["validation_failed", "invalid_json"].contains(reply.code ?? ""), reply.text)
            }
            for latitude in ["1e400", "-1e400", "91", "NaN", "\"Infinity\""] {
                let body = Self.walk(to: b).replacingOccurrences(of: #""latitude": 37.5665"#, with: #""latitude": \#(latitude)"#)
                let reply = try await client.send(.post, "/v1/walks", token: a.token, json: body)
                XCTAssertEqual(reply.status, 400, "\(latitude): \(reply.text)")
            }
            for position in ["x", "1", "1.2.3", "-1.5", "1.-5", "+0.0", "0.+1", "99999999999999999999.1", "1.99999999999999999999"] {
                XCTAssertError(
                    try await client.send(.get, "/v1/me/mates", token: a.token, headers: ["Min-Log-Position": position]),
                    400,
                    "validation_failed",
                    field: "Min-Log-Position"
                )
            }
            // A well-formed position far past the log's head cannot be one the server gave out.
            XCTAssertError(
                try await client.send(.get, "/v1/me/mates", token: a.token, headers: ["Min-Log-Position": "18446744073709551615.1"]),
                400,
                "validation_failed",
                field: "Min-Log-Position"
            )
            XCTAssertError(
                try await client.send(.get, "/v1/me/notifications/stream", token: a.token, headers: ["Last-Event-ID": "1.-1"]),
                400,
                "validation_failed",
                field: "Last-Event-ID"
            )
        }
    }

    /// Bodies that are not JSON a decoder should trust.
    func testDeeplyNestedAndInvalidUTF8BodiesAre400() async throws {
        try await GatewayFixture("hostilejson").run { client in
            let nested = String(repeating: "[", count: 8000) + String(repeating: "]", count: 8000)
            XCTAssertError(try await client.send(.post, "/v1/users", json: nested), 400, "invalid_json")
            let nestedObject = #"{"nickname": "#
            let deep = String(repeating: #"{"a":"#, count: 2000) + "1" + String(repeating: "}", count: 2000)
            let reply = try await client.send(.post, "/v1/users", json: nestedObject + deep + "}")
            XCTAssertEqual(reply.status, 400, reply.text)
            // Invalid UTF-8 inside a string.
            var bytes = Array(Self.signUp(nickname: "utf").utf8)
            let at = bytes.firstIndex(of: UInt8(ascii: "u"))!
            bytes.replaceSubrange(at...at, with: [0xC3, 0x28, 0xFF])
            let raw = try await client.send(.post, "/v1/users", body: Data(bytes))
            XCTAssertError(raw, 400, "invalid_json")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0], "0")
        }
    }

    /// null where a value is required, and a drop token that cannot be one.
    func testNullsAndMalformedTokensAre400() async throws {
        try await GatewayFixture("hostilenull").run { client in
            let a = try await client.signUp("nulls")
            let b = try await client.signUp("tokens")
            for field in ["nickname", "dog_name", "age", "neutered", "size", "keywords"] {
                XCTAssertError(
                    try await client.send(.patch, "/v1/me", token: a.token, json: #"{"\#(field)": null}"#),
                    400,
                    "validation_failed",
                    field: field
                )
            }
            let removed = try await client.send(.patch, "/v1/me", token: a.token, json: #"{"profile_image": null}"#)
            XCTAssertEqual(removed.status, 200, "null removes the picture")
            XCTAssertError(
                try await client.send(
                    .put,
                    "/v1/me/device-token",
                    token: a.token,
                    json: #"{"device_token": "\#(String(repeating: "ab", count: 32))", "locale": null}"#
                ),
                400,
                "validation_failed",
                field: "locale"
            )
            for token in ["", "has space", "ünïcode", String(repeating: "a", count: 201), "a+b/c="] {
                XCTAssertError(
                    try await client.send(
                        .post,
                        "/v1/mate-requests",
                        token: a.token,
                        json: #"{"to": "\#(b.id)", "drop_token": "\#(token)"}"#
                    ),
                    400,
                    "validation_failed",
                    field: "drop_token"
                )
            }
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/mate-requests",
                    token: a.token,
                    json: #"{"to": "\#(b.id)", "drop_token": "never-handed-out_0"}"#
                ),
                403,
                "invalid_drop_token"
            )
        }
    }

    func testBadIdempotencyKeysAre400() async throws {
        try await GatewayFixture("hostilekey").run { client in
            for key in ["", "has space", String(repeating: "k", count: 201), "ключ", "tab\tkey"] {
                let reply = try await client.send(
                    .post,
                    "/v1/users",
                    json: Self.signUp(nickname: "keyed"),
                    headers: ["Idempotency-Key": key]
                )
                XCTAssertError(reply, 400, "validation_failed", field: "Idempotency-Key")
            }
        }
    }

    /// A statement that runs past `statement_timeout` is a passing failure: 503 with Retry-After.
    func testStatementTimeoutIs503WithRetryAfter() async throws {
        let fixture = try GatewayFixture("hostiletimeout") { $0.statementTimeout = .milliseconds(300) }
        try await fixture.run { client in
            let a = try await client.signUp("slow")
            // Hold a lock the query needs, from outside the app.
            let blocker = try Postgres.Connection(connectionString: client.ownerURL)
            try blocker.execute("BEGIN")
            try blocker.execute("LOCK TABLE mates IN ACCESS EXCLUSIVE MODE")
            let reply = try await client.send(.get, "/v1/me/mates", token: a.token)
            try blocker.execute("ROLLBACK")
            XCTAssertError(reply, 503, "unavailable")
            XCTAssertNotNil(reply.header("Retry-After"))
        }
    }

    /// A head past the byte cap, or with more than 100 fields, is refused at the HTTP parser (a
    /// live socket, not the router) with 431 and the JSON error body, and the connection closes.
    func testOversizedHeadIs431WithJSONBody() async throws {
        let fixture = try GatewayFixture("hostileheaders") { $0.maxHeaderBytes = 4096 }
        try await fixture.run(.live) { client in
            let small = try await client.send(.get, "/healthz", headers: ["X-Padding": String(repeating: "a", count: 1000)])
            XCTAssertEqual(small.status, 200)
            let big = try await client.send(.get, "/healthz", headers: ["X-Padding": String(repeating: "a", count: 8000)])
            XCTAssertError(big, 431, "request_header_fields_too_large")
            XCTAssertEqual(big.header("Connection"), "close")
        }
        // A fresh connection: the client does not reuse the one the server closed.
        try await fixture.run(.live) { client in
            var fields: [String: String] = [:]
            for index in 0..<90 { fields["X-Field-\(index)"] = "1" }
            let ninety = try await client.send(.get, "/healthz", headers: fields)
            XCTAssertEqual(ninety.status, 200, ninety.text)
            // 101 short fields: far below the byte cap, past the field count.
            for index in 0...100 { fields["X-Field-\(index)"] = "1" }
            let many = try await client.send(.get, "/healthz", headers: fields)
            XCTAssertError(many, 431, "request_header_fields_too_large")
        }
    }

    /// On a raw connection: a request pipelined before the oversized head is answered first, then
    /// the 431 with its JSON body, then the server closes the connection.
    func testOversizedHeadAfterPipelinedRequestIsAnsweredInOrderThenClosed() async throws {
        let fixture = try GatewayFixture("hostilepipelined") { $0.maxHeaderBytes = 4096 }
        try await fixture.run(.live) { client in
            let port = try XCTUnwrap(client.raw.port)
            let padding = String(repeating: "a", count: 8000)
            let text = try Self.exchange(
                port: port,
                "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: \(padding)\r\n\r\n"
            )
            // Each answer's status line (the 431 follows the 200's body directly).
            let statuses = text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { "HTTP/1.1 " + $0.prefix { !$0.isNewline } }
            XCTAssertEqual(statuses, ["HTTP/1.1 200 OK", "HTTP/1.1 431 Request Header Fields Too Large"], text)
            let body = try XCTUnwrap(text.components(separatedBy: "\r\n\r\n").last)
            let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            let error = try XCTUnwrap(json?["error"] as? [String: Any], text)
            XCTAssertEqual(error["code"] as? String, "request_header_fields_too_large")
            XCTAssertNotNil(error["message"] as? String)
        }
    }

    /// Sends `request` on a plain socket and reads until the server closes it (at most 5 s).
    static func exchange(port: Int, _ request: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            // 0 is the server's close; below 0 the timeout, which leaves the connection open.
            guard count != 0 else { break }
            guard count > 0 else { throw POSIXError(.ETIMEDOUT) }
            received += buffer.prefix(count)
        }
        return String(decoding: received, as: UTF8.self)
    }

    // MARK: Bodies

    static func signUp(nickname: String, dog: String = "Bori", image: String? = nil) -> String {
        let picture = image.map { #""\#($0)""# } ?? "null"
        return
            #"{"nickname": "\#(nickname)", "dog_name": "\#(dog)", "age": 3, "sex": "female", "neutered": true, "size": "small", "keywords": ["smart"], "profile_image": \#(picture)}"#
    }

    static func walk(to user: GatewayFixture.User, message: String = "Park?", place: String = "Seoul Forest") -> String {
        #"{"to": "\#(user.id)", "message": "\#(message)", "latitude": 37.5665, "longitude": 126.978, "place_name": "\#(place)"}"#
    }

    static func base64url(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
