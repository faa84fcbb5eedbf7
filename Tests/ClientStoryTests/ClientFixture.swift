import AsyncHTTPClient
import Foundation
import Gateway
import HummingbirdTesting
import Logging
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Postgres
import PostgresTesting
import SniffMeetClient
import XCTest

/// The gateway as `sniffmeet serve` runs it, on a real port of a fresh migrated database, and
/// generated clients talking to it over AsyncHTTPClient, as the app would.
struct ClientFixture {
    let configuration: GatewayConfiguration
    /// The database's owner login, for a test's own SQL (what no route can do: an old row).
    let ownerURL: String
    let background: BackgroundWork

    init(_ label: String, background: BackgroundWork = .all, _ configure: (inout GatewayConfiguration) -> Void = { _ in }) throws {
        let logins = try TestDatabase.createLogins(label)
        var configuration = GatewayConfiguration(port: 0, databaseURL: logins.runtime, adminToken: "admin-secret")
        configuration.rateLimits = .off
        configure(&configuration)
        self.configuration = configuration
        self.ownerURL = logins.owner
        self.background = background
    }

    /// Runs `text` as the database's owner.
    func sql(_ text: String) throws {
        let connection = try Connection(connectionString: ownerURL)
        _ = try connection.execute(text, [])
    }

    /// Runs `body` while another transaction holds every table of the database locked.
    func withAllTablesLocked<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let connection = try Connection(connectionString: ownerURL)
        _ = try connection.execute("BEGIN", [])
        let tables = try connection.execute(
            "SELECT string_agg(format('%I.%I', schemaname, tablename), ', ') FROM pg_tables WHERE schemaname = current_schema()",
            []
        )
        _ = try connection.execute("LOCK TABLE \(try tables.rows[0].string(0)) IN ACCESS EXCLUSIVE MODE", [])
        defer { _ = try? connection.execute("ROLLBACK", []) }
        return try await body()
    }

    /// Runs `body` with the server's URL while it listens.
    func run(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        var logger = Logger(label: "client-story")
        logger.logLevel = .warning
        let app = try buildApplication(configuration, background: background, logger: logger)
        try await app.test(.live) { client in
            let port = try XCTUnwrap(client.port)
            try await body(URL(string: "http://127.0.0.1:\(port)")!)
        }
    }
}

/// One phone: its state (token, last log position) and its generated client.
struct Phone: Sendable {
    let server: URL
    let state: SniffMeetClient.State
    let client: Client

    init(_ server: URL, token: String? = nil) {
        self.server = server
        state = SniffMeetClient.State(token: token)
        client = SniffMeetClient.make(serverURL: server, transport: AsyncHTTPClientTransport(), state: state)
    }
}

/// The answer's case (`badRequest`, `conflict`, ...) and its body decoded as the one error type;
/// nil for an answer whose body is no error.
func errorAnswer<Output>(_ output: Output) -> (status: String, error: SniffMeetError)? {
    guard let child = Mirror(reflecting: output).children.first, let status = child.label,
        let error = findError(child.value)
    else { return nil }
    return (status, error)
}

private func findError(_ value: Any) -> SniffMeetError? {
    if let error = value as? SniffMeetError { return error }
    for child in Mirror(reflecting: value).children {
        if let error = findError(child.value) { return error }
    }
    return nil
}

/// The error codes the story reached, per operation.
final class Reached: @unchecked Sendable {
    private let lock = NSLock()
    private var codes: Set<String> = []
    var all: Set<String> { lock.withLock { codes } }

    /// Asserts that `output` is the error answer `status` with `code`, decoded as the error type.
    func expect<Output>(
        _ output: Output,
        _ operation: String,
        _ status: String,
        _ code: String,
        file: StaticString = #filePath,
        line: UInt = #line
    ) {
        guard let (answered, error) = errorAnswer(output) else {
            return XCTFail("\(operation): expected \(status) \(code), got \(output)", file: file, line: line)
        }
        XCTAssertEqual(answered, status, "\(operation) \(code)", file: file, line: line)
        XCTAssertEqual(error.error.code, code, "\(operation): \(error.error.message)", file: file, line: line)
        XCTAssertFalse(error.error.message.isEmpty, file: file, line: line)
        record(operation, code)
    }

    /// Records that `operation` answered `code` (checked by the caller).
    func record(_ operation: String, _ code: String) {
        _ = lock.withLock { codes.insert("\(operation) \(code)") }
    }
}
