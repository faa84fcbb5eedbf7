import Foundation
import Gateway
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
import PostgresTesting
import XCTest

/// A gateway on a fresh migrated database, and helpers to talk to it like a client would.
/// The gateway works as the runtime login, as `sniffmeet serve` does, so every HTTP test also
/// shows that the runtime role's rights suffice.
struct GatewayFixture {
    let configuration: GatewayConfiguration
    /// The same database as its owner, for test setup that reaches past the app.
    let ownerURL: String
    /// What runs beside the server; without `.projections` the read models never move.
    var background: BackgroundWork = .all

    init(_ label: String, background: BackgroundWork = .all, _ configure: (inout GatewayConfiguration) -> Void = { _ in }) throws {
        self.background = background
        let logins = try TestDatabase.createLogins(label)
        var configuration = GatewayConfiguration(port: 0, databaseURL: logins.runtime, adminToken: "admin-secret")
        // Tests sign up many users from one address; the rate-limit tests set budgets themselves.
        configuration.rateLimits = .off
        configure(&configuration)
        self.configuration = configuration
        self.ownerURL = logins.owner
    }

    /// Runs `body` against the app through HummingbirdTesting's router client; `logger` sees
    /// what the server logs (warnings and errors only by default).
    func run(
        _ setup: TestingSetup = .router,
        logger: Logger? = nil,
        _ body: @escaping @Sendable (Client) async throws -> Void
    ) async throws {
        let app = try buildApplication(
            configuration,
            background: background,
            logger: logger
                ?? {
                    var logger = Logger(label: "test")
                    logger.logLevel = .warning
                    return logger
                }()
        )
        try await app.test(setup) { client in
            try await body(Client(raw: client, ownerURL: ownerURL, runtimeURL: configuration.databaseURL))
        }
    }

    /// A thin client: JSON in, status + JSON out.
    struct Client: Sendable {
        let raw: any TestClientProtocol
        let ownerURL: String
        /// The runtime login the server uses.
        let runtimeURL: String

        @discardableResult
        func send(
            _ method: HTTPRequest.Method,
            _ uri: String,
            token: String? = nil,
            json: String? = nil,
            headers extra: [String: String] = [:]
        ) async throws -> Reply {
            var headers = HTTPFields()
            if let token { headers[.authorization] = "Bearer \(token)" }
            if json != nil { headers[.contentType] = "application/json" }
            for (name, value) in extra { headers[HTTPField.Name(name)!] = value }
            let response = try await raw.executeRequest(
                uri: uri,
                method: method,
                headers: headers,
                body: json.map { ByteBuffer(string: $0) }
            )
            return Reply(status: response.status.code, headers: response.headers, body: Data(response.body.readableBytesView))
        }

        /// Sends raw body bytes as JSON (for bodies a string literal cannot hold, such as invalid UTF-8).
        @discardableResult
        func send(
            _ method: HTTPRequest.Method,
            _ uri: String,
            token: String? = nil,
            body: Data,
            headers extra: [String: String] = [:]
        ) async throws -> Reply {
            var headers = HTTPFields()
            if let token { headers[.authorization] = "Bearer \(token)" }
            headers[.contentType] = "application/json"
            for (name, value) in extra { headers[HTTPField.Name(name)!] = value }
            let response = try await raw.executeRequest(uri: uri, method: method, headers: headers, body: ByteBuffer(bytes: body))
            return Reply(status: response.status.code, headers: response.headers, body: Data(response.body.readableBytesView))
        }

        /// Signs up a user with a valid profile; returns (user id, token).
        func signUp(_ nickname: String, dog: String = "Bori") async throws -> User {
            let reply = try await send(
                .post,
                "/v1/users",
                json: """
                    {"nickname": "\(nickname)", "dog_name": "\(dog)", "age": 3, "sex": "female", "neutered": true,
                     "size": "small", "keywords": ["smart", "shy"], "profile_image": null}
                    """
            )
            XCTAssertEqual(reply.status, 201, reply.text)
            return User(id: reply.json["user_id"] as! String, token: reply.json["token"] as! String)
        }

        /// Signs `user` in on a second phone with a transfer code; returns that session's token.
        func secondPhone(_ user: User) async throws -> String {
            let code = try await send(.post, "/v1/me/transfer-codes", token: user.token).json["transfer_code"] as! String
            let session = try await send(.post, "/v1/sessions", json: #"{"transfer_code": "\#(code)"}"#)
            XCTAssertEqual(session.status, 201, session.text)
            return session.json["token"] as! String
        }

        /// `a` and `b` become mates through a drop token and two requests; returns the request id.
        @discardableResult
        func makeMates(_ a: User, _ b: User) async throws -> String {
            let drop = try await send(.post, "/v1/me/drop-tokens", token: b.token)
            XCTAssertEqual(drop.status, 201, drop.text)
            let request = try await send(
                .post,
                "/v1/mate-requests",
                token: a.token,
                json: #"{"to": "\#(b.id)", "drop_token": "\#(drop.json["drop_token"] as! String)"}"#
            )
            XCTAssertEqual(request.status, 201, request.text)
            let id = request.json["request_id"] as! String
            let accept = try await send(.post, "/v1/mate-requests/\(id)/accept", token: b.token)
            XCTAssertEqual(accept.status, 200, accept.text)
            return id
        }

        /// `GET /v1/me`'s status for `token`, asked again while it is `404`: the profile is read
        /// from its read model once projected (or replayed on the standby that answers), and
        /// without a `Min-Log-Position` nothing waits for that; for up to five seconds.
        func profileStatus(token: String) async throws -> Int {
            var status = 0
            for _ in 0..<100 where status != 200 {
                status = try await send(.get, "/v1/me", token: token).status
                if status == 404 { try await Task.sleep(for: .milliseconds(50)) }
            }
            return status
        }

        /// The process's LISTEN connections as the runtime login sees them in `pg_stat_activity`
        /// (a listener waiting shows its `LISTEN` or its liveness check), once there is at least
        /// one or five seconds passed.
        func listeners() async throws -> Int {
            let connection = try Connection(connectionString: runtimeURL)
            let sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND (query LIKE 'LISTEN %' OR query = $1)"
            var listening = 0
            for _ in 0..<100 {
                listening = try connection.execute(sql, [NotificationListener.checkSQL]).first!.int(0)
                if listening > 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            return listening
        }

        /// Runs SQL on the app's database as its owner (test setup only: expiring tokens,
        /// counting events, forgetting a migration).
        func sql(_ text: String, _ parameters: [any PostgresEncodable] = []) throws -> [[String?]] {
            let connection = try Connection(connectionString: ownerURL)
            let result = try connection.execute(text, parameters)
            return result.rows.map { row in (0..<result.columnCount).map { row.optionalString($0) } }
        }
    }

    struct User: Sendable {
        var id: String
        var token: String
    }

    struct Reply: Sendable {
        var status: Int
        var headers: HTTPFields
        var body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var items: [[String: Any]] { json["items"] as? [[String: Any]] ?? [] }
        /// `error.code` of an error answer.
        var code: String? { (json["error"] as? [String: Any])?["code"] as? String }
        var field: String? { (json["error"] as? [String: Any])?["field"] as? String }
        func header(_ name: String) -> String? { headers[HTTPField.Name(name)!] }
    }
}

/// Asserts an error answer: status, stable code and JSON shape.
func XCTAssertError(
    _ reply: GatewayFixture.Reply,
    _ status: Int,
    _ code: String,
    field: String? = nil,
    file: StaticString = #filePath,
    line: UInt = #line
) {
    XCTAssertEqual(reply.status, status, reply.text, file: file, line: line)
    XCTAssertEqual(reply.code, code, reply.text, file: file, line: line)
    XCTAssertNotNil((reply.json["error"] as? [String: Any])?["message"] as? String, reply.text, file: file, line: line)
    if let field { XCTAssertEqual(reply.field, field, reply.text, file: file, line: line) }
}
