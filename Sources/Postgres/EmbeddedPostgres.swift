import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL cluster in a data folder of the project, started with the installed
/// `initdb`/`pg_ctl`. It listens only on a Unix socket in a private directory (mode 0700), so
/// trust authentication reaches nobody but its owner.
///
/// PostgreSQL refuses to run as root; when we are root the cluster runs as the `postgres`
/// system user (or `nobody`), which owns the data folder.
public final class EmbeddedPostgres: Sendable {
    public struct Options: Sendable {
        /// Where the cluster lives; created on first start.
        public var dataDirectory: String
        /// `fsync=off` trades crash safety for speed: tests only.
        public var durable: Bool
        public var maxConnections: Int
        public init(dataDirectory: String, durable: Bool = true, maxConnections: Int = 200) {
            self.dataDirectory = dataDirectory
            self.durable = durable
            self.maxConnections = maxConnections
        }
    }

    public enum Failure: Error, CustomStringConvertible {
        case binariesNotFound
        case commandFailed(command: String, output: String)
        case noUnprivilegedUser
        case invalidDatabaseName(String)

        public var description: String {
            switch self {
            case .binariesNotFound:
                return "PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or under /usr/lib/postgresql/*/bin; install the `postgresql` package or set DATABASE_URL"
            case .commandFailed(let command, let output):
                return "`\(command)` failed:\n\(output)"
            case .noUnprivilegedUser:
                return "running as root, but neither a `postgres` nor a `nobody` user exists to run the cluster"
            case .invalidDatabaseName(let name):
                return "invalid database name \(name): use lowercase letters, digits and _"
            }
        }
    }

    public let options: Options
    public let socketDirectory: String
    public let superuser = "sniffmeet"
    private let binDirectory: String
    private let runAs: (name: String, uid: uid_t, gid: gid_t)?
    private let logger: Logger

    public init(_ options: Options, logger: Logger = Logger(label: "sniffmeet.embedded-postgres")) throws {
        var options = options
        options.dataDirectory = URL(fileURLWithPath: options.dataDirectory).standardizedFileURL.path
        self.options = options
        self.logger = logger
        guard let bin = Self.findBinDirectory() else { throw Failure.binariesNotFound }
        self.binDirectory = bin
        if geteuid() == 0 {
            guard let user = ["postgres", "nobody"].lazy.compactMap({ name -> (String, uid_t, gid_t)? in
                guard let entry = getpwnam(name) else { return nil }
                return (name, entry.pointee.pw_uid, entry.pointee.pw_gid)
            }).first else { throw Failure.noUnprivilegedUser }
            self.runAs = user
        } else {
            self.runAs = nil
        }
        // Unix socket paths are limited to ~107 bytes, so the socket lives in a short private
        // directory named after the data folder rather than inside it.
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in options.dataDirectory.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        self.socketDirectory = "/tmp/sniffmeet-pg-\(String(hash, radix: 36))"
    }

    /// A libpq connection string for `database` on this cluster.
    public func connectionString(database: String = "postgres") -> String {
        "host=\(socketDirectory) port=5432 user=\(superuser) dbname=\(database) connect_timeout=5"
    }

    /// Creates the cluster on first use and starts it, unless it already runs. Returns true when
    /// this call started the server (and so should stop it).
    @discardableResult
    public func start() throws -> Bool {
        let fileManager = FileManager.default
        try makeOwnedDirectory(socketDirectory)
        if !fileManager.fileExists(atPath: options.dataDirectory + "/PG_VERSION") {
            try makeOwnedDirectory(options.dataDirectory)
            logger.info("creating a private PostgreSQL cluster", metadata: ["data": "\(options.dataDirectory)"])
            try run(binDirectory + "/initdb", ["-D", options.dataDirectory, "-U", superuser, "--auth=trust",
                                               "-E", "UTF8", "--no-locale", "--no-sync"])
            let settings = """

            # Added by sniffmeet: private socket only, no TCP.
            listen_addresses = ''
            unix_socket_directories = '\(socketDirectory)'
            unix_socket_permissions = 0700
            max_connections = \(options.maxConnections)
            shared_buffers = 256MB
            """
            let conf = options.dataDirectory + "/postgresql.conf"
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: conf))
            handle.seekToEndOfFile()
            handle.write(Data(settings.utf8))
            try handle.close()
        }
        if isRunning() { return false }
        var serverOptions = "-k \(socketDirectory)"
        if !options.durable { serverOptions += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off" }
        try run(binDirectory + "/pg_ctl", ["start", "-w", "-t", "60", "-D", options.dataDirectory,
                                           "-l", options.dataDirectory + "/server.log", "-o", serverOptions])
        return true
    }

    /// Whether a server is running on this data folder.
    public func isRunning() -> Bool {
        (try? run(binDirectory + "/pg_ctl", ["status", "-D", options.dataDirectory])) != nil
    }

    /// Stops the server (fast shutdown: running transactions are rolled back).
    public func stop() throws {
        try run(binDirectory + "/pg_ctl", ["stop", "-w", "-m", "fast", "-D", options.dataDirectory])
    }

    /// Restarts the server, as a crash test or a config reload would.
    public func restart() throws {
        var serverOptions = "-k \(socketDirectory)"
        if !options.durable { serverOptions += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off" }
        try run(binDirectory + "/pg_ctl", ["restart", "-w", "-m", "fast", "-D", options.dataDirectory,
                                           "-l", options.dataDirectory + "/server.log", "-o", serverOptions])
    }

    /// Creates a database unless it exists (optionally as a copy of `template`).
    public func createDatabase(_ name: String, template: String? = nil) throws {
        for candidate in [name] + (template.map { [$0] } ?? []) {
            guard !candidate.isEmpty, candidate.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "_" }), candidate.first!.isLetter
            else { throw Failure.invalidDatabaseName(candidate) }
        }
        let connection = try Connection(connectionString: connectionString())
        let exists = try connection.execute("SELECT 1 FROM pg_database WHERE datname = $1", [name]).count > 0
        if exists { return }
        // Identifiers cannot be parameters; the name was checked against a strict pattern above.
        try connection.execute("CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0)" } ?? ""))
    }

    // MARK: Helpers

    static func findBinDirectory() -> String? {
        let fileManager = FileManager.default
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) {
            let initdb = directory + "/initdb"
            if fileManager.isExecutableFile(atPath: initdb), fileManager.isExecutableFile(atPath: directory + "/pg_ctl") {
                // Debian's /usr/bin has wrappers only for clients; resolve links to the real folder.
                let resolved = URL(fileURLWithPath: initdb).resolvingSymlinksInPath().deletingLastPathComponent().path
                if fileManager.isExecutableFile(atPath: resolved + "/postgres") { return resolved }
            }
        }
        let versions = (try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let directory = "/usr/lib/postgresql/\(version)/bin"
            if fileManager.isExecutableFile(atPath: directory + "/initdb") { return directory }
        }
        return nil
    }

    private func makeOwnedDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        chmod(path, 0o700)
        if let runAs {
            guard chown(path, runAs.uid, runAs.gid) == 0 else {
                throw Failure.commandFailed(command: "chown \(runAs.name) \(path)", output: String(cString: strerror(errno)))
            }
        }
    }

    /// Runs a server binary, as the unprivileged user when we are root; returns its output.
    ///
    /// posix_spawn and waitpid directly: Foundation's Process can miss the exit of a child whose
    /// own child (the postmaster) lives on.
    @discardableResult
    private func run(_ executable: String, _ arguments: [String]) throws -> String {
        // As root: run as the cluster user, from / (it may not be able to enter our directory).
        let argv: [String] = runAs.map { ["/usr/sbin/runuser", "-u", $0.name, "--", "/usr/bin/env", "-C", "/", executable] + arguments }
            ?? [executable] + arguments
        // Output goes to a file, not a pipe: the postmaster inherits descriptors and never closes them.
        let outputPath = NSTemporaryDirectory() + "sniffmeet-cmd-\(UUID().uuidString).out"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, environ)
        guard spawned == 0 else {
            throw Failure.commandFailed(command: argv.joined(separator: " "), output: String(cString: strerror(spawned)))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // WIFEXITED && WEXITSTATUS == 0
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw Failure.commandFailed(command: argv.joined(separator: " "), output: text)
        }
        return text
    }
}
