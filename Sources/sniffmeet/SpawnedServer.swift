import Foundation

/// A `sniffmeet serve` of this same binary on its own embedded PostgreSQL, as the HTTP benches
/// run it: rate limits off, long request deadline, never a configured database.
struct SpawnedServer {
    /// The running process.
    let process: Process
    /// The port it serves on.
    let port: Int
    /// Where its output goes.
    let log: String

    /// Starts the server on `port` with its data in `dataDirectory`, its output into `log`;
    /// `environment` adds settings of its own.
    init(port: Int, dataDirectory: String, log: String, environment extra: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDirectory]
        var environment = ProcessInfo.processInfo.environment
        environment["SNIFFMEET_RATE_LIMITS"] = "off"
        environment["SNIFFMEET_REQUEST_TIMEOUT_SECONDS"] = "120"
        environment.removeValue(forKey: "DATABASE_URL")
        environment.removeValue(forKey: "MIGRATION_DATABASE_URL")
        environment.merge(extra) { _, new in new }
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = output
        process.standardError = output
        try process.run()
        self.process = process
        self.port = port
        self.log = log
    }

    /// Stops the server and waits for it to exit.
    func stop() {
        process.interrupt()
        process.waitUntilExit()
    }

    /// Returns once `/readyz` answers 200; if the server exits or is not ready in 2 minutes, its
    /// log goes to standard error and this throws.
    func waitUntilReady() async throws {
        for _ in 0..<600 {
            guard process.isRunning else { throw failure("sniffmeet serve exited") }
            if let reply = try? BenchHTTPClient(port: port).send("GET", "/readyz"), reply.status == 200 { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw failure("sniffmeet serve not ready after 2 minutes")
    }

    private func failure(_ description: String) -> BenchHTTPClient.Failure {
        FileHandle.standardError.write((try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data())
        return BenchHTTPClient.Failure(description: description)
    }
}
