import Foundation
import Postgres

#if canImport(Glibc)
import Glibc
#endif

/// PostgreSQL's own load generator as a same-run reference: `pgbench` running a custom script
/// with `-M prepared` (parse once, then bind and execute, as our wrapper's prepared statements do).
public struct PGBench: Sendable {
    /// Why pgbench could not give a rate.
    public enum Failure: Error, CustomStringConvertible {
        /// No pgbench program was found.
        case notFound
        /// pgbench did not start, or ended with a non-zero status (its output attached).
        case failed(exitStatus: Int32, output: String)
        /// pgbench succeeded but its report had no rate.
        case noRate(output: String)

        public var description: String {
            switch self {
            case .notFound:
                return
                    "pgbench not found on PATH or under /usr/lib/postgresql/*/bin; install the `postgresql` package (Debian ships pgbench with the server)"
            case .failed(let status, let output): return "pgbench exited with status \(status):\n\(output)"
            case .noRate(let output): return "pgbench printed no tps line:\n\(output)"
            }
        }
    }

    /// The pgbench program.
    public let path: String

    /// pgbench on `PATH`, else the newest `/usr/lib/postgresql/<version>/bin/pgbench`: where the
    /// embedded cluster finds `initdb`.
    public static func locate() throws(Failure) -> PGBench {
        let fileManager = FileManager.default
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") where fileManager.isExecutableFile(atPath: "\(directory)/pgbench") {
            return PGBench(path: "\(directory)/pgbench")
        }
        let versions = (try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let candidate = "/usr/lib/postgresql/\(version)/bin/pgbench"
            if fileManager.isExecutableFile(atPath: candidate) { return PGBench(path: candidate) }
        }
        throw .notFound
    }

    /// The pgbench program at `path`.
    public init(path: String) { self.path = path }

    /// Runs `script` (pgbench's script language; `variables` are defined with `-D`) with
    /// `clients` connections for `seconds` whole seconds on `connectionString` (either libpq
    /// form), and returns pgbench's transactions per second without connection setup, as the
    /// wrapper's warm pool is measured.
    public func run(
        script: String,
        variables: [String: String] = [:],
        clients: Int,
        seconds: Int,
        connectionString: String
    ) async throws -> Double {
        let directory = FileManager.default.temporaryDirectory
        let scriptFile = directory.appendingPathComponent("sniffmeet-pgbench-\(UUID().uuidString).sql")
        // Output goes to a file, not a pipe: nothing can block on a full pipe while we wait.
        let outputFile = directory.appendingPathComponent("sniffmeet-pgbench-\(UUID().uuidString).out")
        defer {
            try? FileManager.default.removeItem(at: scriptFile)
            try? FileManager.default.removeItem(at: outputFile)
        }
        try Data(script.utf8).write(to: scriptFile)
        // -n: no vacuum of pgbench's own tables (there are none); one thread per client up to
        // the cores, so pgbench's side is not the bottleneck of a many-client run.
        let threads = max(1, min(clients, ProcessInfo.processInfo.activeProcessorCount))
        let arguments =
            [
                path, "-n", "-M", "prepared", "-f", scriptFile.path, "-c", "\(clients)", "-j", "\(threads)",
                "-T", "\(max(1, seconds))",
            ]
            + variables.sorted { $0.key < $1.key }.flatMap { ["-D", "\($0.key)=\($0.value)"] }
            + [connectionString]
        let outputPath = outputFile.path
        let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            // waitpid blocks: a thread of its own, never one of Swift's few cooperative threads.
            Thread { continuation.resume(with: Result { try Self.spawnAndWait(arguments, output: outputPath) }) }.start()
        }
        let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        guard status == 0 else { throw Failure.failed(exitStatus: status, output: text) }
        return try Self.rate(in: text)
    }

    /// Runs `arguments` (program first) with stdout and stderr to the file `output`; returns the
    /// exit status. Blocks. (`ChildProcess` starts pgbench with no signal blocked: it ends a `-T`
    /// run on SIGALRM.)
    static func spawnAndWait(_ arguments: [String], output: String) throws(Failure) -> Int32 {
        do {
            return try ChildProcess.run(arguments, output: output)
        } catch {
            throw .failed(exitStatus: -1, output: error.message)
        }
    }

    /// The rate from pgbench's report: `tps = 15812.345678 (without initial connection time)`.
    static func rate(in output: String) throws(Failure) -> Double {
        for line in output.split(separator: "\n") where line.hasPrefix("tps = ") {
            let number = line.dropFirst("tps = ".count).prefix { $0.isNumber || $0 == "." }
            if let rate = Double(number) { return rate }
        }
        throw .noRate(output: output)
    }
}
