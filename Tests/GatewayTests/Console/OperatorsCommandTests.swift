import Foundation
import Gateway
import Postgres
import XCTest

/// `sniffmeet operators add|list|token|remove` as an operator runs them: the built executable on
/// a fixture's database, as its owner.
final class OperatorsCommandTests: XCTestCase {
    /// Runs `sniffmeet operators …`; returns (exit status, standard output, standard error).
    static func run(
        _ fixture: GatewayFixture,
        _ arguments: [String],
        environment extra: [String: String] = [:]
    ) throws -> (
        Int32, String, String
    ) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let binary = root.appendingPathComponent(".build/debug/sniffmeet").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw XCTSkip("the sniffmeet executable is not built at \(binary); run `swift build` first")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["operators"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = fixture.configuration.databaseURL
        environment["MIGRATION_DATABASE_URL"] = fixture.ownerURL
        environment["LOG_LEVEL"] = "warning"
        environment.removeValue(forKey: "SNIFFMEET_PUBLIC_URL")
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    func testAddListTokenRemove() async throws {
        let fixture = try GatewayFixture("operators_command")
        try await fixture.run { client in
            let (status, link, _) = try Self.run(fixture, ["add", "mina"])
            XCTAssertEqual(status, 0)
            XCTAssertTrue(link.hasPrefix("http://127.0.0.1:8080/console/set-password?link="), link)
            let (_, other, _) = try Self.run(fixture, ["add", "jun"], environment: ["SNIFFMEET_PUBLIC_URL": "https://console.example/"])
            XCTAssertTrue(other.hasPrefix("https://console.example/console/set-password?link="), other)
            let (twice, _, refusal) = try Self.run(fixture, ["add", "mina"])
            XCTAssertEqual(twice, 1)
            XCTAssertTrue(refusal.contains("exists already"), refusal)
            XCTAssertEqual(try Self.run(fixture, ["add", "admin"]).0, 1)

            // The printed link sets the password.
            let secret = String(link.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "=").last!)
            let page = try await client.send(.get, "/console/set-password?link=\(secret)")
            XCTAssertEqual(page.status, 200)
            XCTAssertTrue(page.text.contains("mina"))

            let (_, list, _) = try Self.run(fixture, ["list"])
            XCTAssertEqual(list.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }, ["jun", "mina"])
            let (tokenStatus, token, _) = try Self.run(fixture, ["token", "mina"])
            XCTAssertEqual(tokenStatus, 0)
            let bearer = token.trimmingCharacters(in: .whitespacesAndNewlines)
            let value1 = try await client.send(.get, "/v1/admin/reports", token: bearer).status
            XCTAssertEqual(value1, 200)
            XCTAssertEqual(try Self.run(fixture, ["token", "nobody"]).0, 1)

            XCTAssertEqual(try Self.run(fixture, ["remove", "mina"]).0, 0)
            XCTAssertEqual(try Self.run(fixture, ["remove", "mina"]).0, 1)
            let value2 = try await client.send(.get, "/v1/admin/reports", token: bearer).status
            XCTAssertEqual(value2, 401)
            let value3 = try await client.send(.get, "/console/set-password?link=\(secret)").status
            XCTAssertEqual(value3, 410)
            XCTAssertEqual(try Self.run(fixture, ["list"]).1.split(separator: "\n").count, 1)
        }
    }
}
