import Foundation
import XCTest

/// `scripts/setup` installs what every documented bench runs beside the server.
final class SetupScriptTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// What setup would install with `path` as PATH (a dry run: nothing is installed).
    func wouldInstall(path: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.repository.appendingPathComponent("scripts/setup").path]
        process.environment = ["PATH": path, "SNIFFMEET_SETUP_DRY_RUN": "1"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let text = String(decoding: data, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("would install: ") }) else { return [] }
        return line.dropFirst("would install: ".count).split(separator: " ").map(String.init)
    }

    func testSetupInstallsTheBenchesTools() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("setup-empty-\(UUID())")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let missing = try wouldInstall(path: empty.path)
        // h2load (`sniffmeet bench push`) and wrk (scripts/bench-http, scripts/bench-streams).
        XCTAssertTrue(missing.contains("nghttp2-client"), "\(missing)")
        XCTAssertTrue(missing.contains("wrk"), "\(missing)")
        // Present, they are not installed again.
        for tool in ["h2load", "wrk"] {
            let file = empty.appendingPathComponent(tool)
            try "#!/bin/sh\n".write(to: file, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file.path)
        }
        let present = try wouldInstall(path: empty.path)
        XCTAssertFalse(present.contains("nghttp2-client"), "\(present)")
        XCTAssertFalse(present.contains("wrk"), "\(present)")
    }
}
