import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL cluster in a data folder of the project, started with the installed
/// `initdb`/`pg_ctl`. It listens only on a Unix socket in `<data folder>/run`, inside the
/// folder's own mode 0700, so trust authentication reaches nobody but its owner (and root).
///
/// PostgreSQL refuses to run as root; when we are root the cluster runs as the `postgres`
/// system user (or `nobody`), which owns the data folder.
///
/// Roles: `superuser` (initdb's bootstrap user) is the launcher's own, for creating roles and
/// databases only. `ownerLogin` owns the databases made here and runs migrations;
/// `runtimeLogin`, a member of `runtimeGroup`, is what `sniffmeet serve` works as (schema
/// migration 0006 grants that group its rights).
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
        /// Unix socket paths hold at most 107 bytes.
        case socketPathTooLong(path: String)
        /// A data or socket folder that others could enter or that belongs to someone else.
        case unsafeDirectory(path: String, reason: String)
        /// A server is running on the data folder with its socket elsewhere (started by an
        /// earlier version, which kept the socket in /tmp).
        case runningWithOtherSocket(dataDirectory: String, socketDirectory: String)

        public var description: String {
            switch self {
            case .binariesNotFound:
                return
                    "PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or under /usr/lib/postgresql/*/bin; install the `postgresql` package or set DATABASE_URL"
            case .commandFailed(let command, let output):
                return "`\(command)` failed:\n\(output)"
            case .noUnprivilegedUser:
                return "running as root, but neither a `postgres` nor a `nobody` user exists to run the cluster"
            case .invalidDatabaseName(let name):
                return "invalid database or role name \(name): use lowercase letters, digits and _"
            case .socketPathTooLong(let path):
                return
                    "the embedded cluster's socket would be \(path) (\(path.utf8.count) bytes), longer than the \(EmbeddedPostgres.maxSocketPathBytes) bytes a Unix socket path may have: use a shorter data folder (--data-dir or SNIFFMEET_DATA_DIR)"
            case .unsafeDirectory(let path, let reason):
                return "refusing the embedded cluster's folder \(path): \(reason)"
            case .runningWithOtherSocket(let data, let socket):
                return
                    "a PostgreSQL server already runs on \(data) with its socket in \(socket) (started by an earlier sniffmeet, or by hand); stop it (`pg_ctl stop -D \(data)`, as the folder's owner) and start again: the socket now lives in the data folder"
            }
        }
    }

    /// The bootstrap superuser: the launcher's own login, used only to create roles and
    /// databases. (Earlier versions handed it to the application; their data folders keep it.)
    public let superuser = "sniffmeet"
    /// The login that owns the databases created here and runs migrations: no superuser, but
    /// CREATEDB for the benchmarks' scratch databases.
    public static let ownerLogin = "sniffmeet_owner"
    /// The login of `sniffmeet serve`: a member of `runtimeGroup`, nothing more.
    public static let runtimeLogin = "sniffmeet_app"
    /// The group role that migration 0006 grants the runtime's rights to.
    public static let runtimeGroup = "sniffmeet_runtime"
    /// `sizeof(sockaddr_un.sun_path)` on Linux, less the terminating zero.
    public static let maxSocketPathBytes = 107

    public let options: Options
    /// `<data folder>/run`: private because the data folder is.
    public let socketDirectory: String
    private let binDirectory: String
    private let runAs: (name: String, uid: uid_t, gid: gid_t)?
    private let logger: Logger

    public init(_ options: Options, logger: Logger = Logger(label: "sniffmeet.embedded-postgres")) throws {
        var options = options
        options.dataDirectory = URL(fileURLWithPath: options.dataDirectory).standardizedFileURL.path
        self.options = options
        self.logger = logger
        // The socket sits inside the 0700 data folder rather than in a predictable /tmp folder
        // that someone else could create first; the price is a bound on the folder's path.
        self.socketDirectory = options.dataDirectory + "/run"
        let socketPath = socketDirectory + "/.s.PGSQL.5432"
        guard socketPath.utf8.count <= Self.maxSocketPathBytes else { throw Failure.socketPathTooLong(path: socketPath) }
        guard let bin = Self.findBinDirectory() else { throw Failure.binariesNotFound }
        self.binDirectory = bin
        if geteuid() == 0 {
            guard
                let user = ["postgres", "nobody"].lazy.compactMap({ name -> (String, uid_t, gid_t)? in
                    guard let entry = getpwnam(name) else { return nil }
                    return (name, entry.pointee.pw_uid, entry.pointee.pw_gid)
                }).first
            else { throw Failure.noUnprivilegedUser }
            self.runAs = user
        } else {
            self.runAs = nil
        }
    }

    /// A libpq connection string for `database` on this cluster, as `user` (default: the
    /// bootstrap superuser).
    public func connectionString(database: String = "postgres", user: String? = nil) -> String {
        "host=\(Self.conninfoQuoted(socketDirectory)) port=5432 user=\(Self.conninfoQuoted(user ?? superuser)) dbname=\(Self.conninfoQuoted(database)) connect_timeout=5"
    }

    /// Creates the cluster on first use and starts it, unless it already runs. Returns true when
    /// this call started the server (and so should stop it).
    @discardableResult
    public func start() throws -> Bool {
        try makePrivateDirectory(options.dataDirectory)
        if !FileManager.default.fileExists(atPath: options.dataDirectory + "/PG_VERSION") {
            logger.info("creating a private PostgreSQL cluster", metadata: ["data": "\(options.dataDirectory)"])
            try run(
                binDirectory + "/initdb",
                [
                    "-D", options.dataDirectory, "-U", superuser, "--auth=trust",
                    "-E", "UTF8", "--no-locale", "--no-sync",
                ]
            )
            // The socket folder is named by `-k` at every start (so it moves with the data
            // folder), not here. The file ends with a newline, so an operator's line appended to
            // it stays a line of its own (without it, the next setting ran into `256MB`).
            let settings = """

                # Added by sniffmeet: private socket only, no TCP.
                listen_addresses = ''
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
        // After initdb, which wants an empty folder. Data folders of earlier versions name a
        // /tmp socket folder in postgresql.conf; `-k` overrides it.
        try makePrivateDirectory(socketDirectory)
        if isRunning() {
            if let running = runningSocketDirectory(), running != socketDirectory {
                throw Failure.runningWithOtherSocket(dataDirectory: options.dataDirectory, socketDirectory: running)
            }
            return false
        }
        try run(
            binDirectory + "/pg_ctl",
            [
                "start", "-w", "-t", "60", "-D", options.dataDirectory,
                "-l", options.dataDirectory + "/server.log", "-o", serverOptions,
            ]
        )
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
        try run(
            binDirectory + "/pg_ctl",
            [
                "restart", "-w", "-m", "fast", "-D", options.dataDirectory,
                "-l", options.dataDirectory + "/server.log", "-o", serverOptions,
            ]
        )
    }

    // MARK: Replication (tests of failover and read replicas)

    /// Makes this (not yet created) cluster a streaming standby of `primary` and starts it:
    /// `pg_basebackup -R` over the primary's private socket as its bootstrap superuser (initdb's
    /// trust rules admit local replication), so `primary_conninfo` and `standby.signal` are
    /// written for us. `applyDelay` sets `recovery_min_apply_delay` (a standby that lags on purpose);
    /// `name` is its `application_name`, the name `synchronous_standby_names` lists.
    public func startStandby(of primary: EmbeddedPostgres, name: String = "standby", applyDelay: Duration? = nil) throws {
        precondition(Self.isPlainIdentifier(name), "a standby name must be a plain identifier")
        try makePrivateDirectory(options.dataDirectory)
        let source =
            "host=\(Self.conninfoQuoted(primary.socketDirectory)) port=5432 user=\(Self.conninfoQuoted(primary.superuser)) application_name=\(name)"
        try run(
            binDirectory + "/pg_basebackup",
            ["-D", options.dataDirectory, "-d", source, "-R", "-X", "stream", "-c", "fast", "--no-sync"]
        )
        // The copy holds the primary's socket lock file; this server makes its own.
        try? FileManager.default.removeItem(atPath: socketDirectory)
        if let applyDelay {
            let milliseconds = applyDelay.components.seconds * 1000 + applyDelay.components.attoseconds / 1_000_000_000_000_000
            try append("recovery_min_apply_delay = '\(milliseconds)ms'\n", toFile: "postgresql.auto.conf")
        }
        try start()
    }

    /// Promotes a standby to a primary and waits until it takes writes.
    public func promote() throws {
        try run(binDirectory + "/pg_ctl", ["promote", "-w", "-t", "60", "-D", options.dataDirectory])
    }

    /// Kills the postmaster and every process under it with SIGKILL at once, as a machine that
    /// dies would stop them (backends left alive would still answer and even commit).
    public func kill() throws {
        guard let text = try? String(contentsOfFile: options.dataDirectory + "/postmaster.pid", encoding: .utf8),
            let line = text.split(separator: "\n").first, let pid = pid_t(line)
        else { return }
        let children = Self.children(of: pid)
        _ = Glibc.kill(pid, SIGKILL)
        for child in children { _ = Glibc.kill(child, SIGKILL) }
        for _ in 0..<100 where Glibc.kill(pid, 0) == 0 { usleep(20_000) }
        // Clears the stale pid file so that `start` and `isRunning` see a stopped server.
        try? run(binDirectory + "/pg_ctl", ["stop", "-m", "immediate", "-D", options.dataDirectory])
    }

    /// The processes whose parent is `parent` (field 4 of /proc/PID/stat).
    private static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.range(of: ") ", options: .backwards)
            else { return nil }
            let fields = stat[close.upperBound...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    /// Sets one server setting with `ALTER SYSTEM`-like persistence (`postgresql.auto.conf`) and
    /// reloads: for settings the tests change while the server runs (`synchronous_standby_names`).
    /// Returns once a new session sees the value (at most two seconds).
    public func setAndReload(_ name: String, _ value: String) throws {
        precondition(Self.isPlainIdentifier(name))
        let connection = try Connection(connectionString: connectionString())
        try connection.executeScript("ALTER SYSTEM SET \(name) = '\(value.replacingOccurrences(of: "'", with: "''"))'")
        try connection.execute("SELECT pg_reload_conf()")
        // The reload is a signal: a session opened right after may still fork from a
        // postmaster that has not read the file. Until a new session shows the value (as
        // PostgreSQL prints it; a value it prints otherwise, with units, waits out the bound).
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline {
            let fresh = try Connection(connectionString: connectionString())
            if try fresh.execute("SELECT current_setting($1)", [name]).first?.string(0) == value { return }
            usleep(10_000)
        }
    }

    private func append(_ text: String, toFile name: String) throws {
        // As root the file belongs to the cluster user; root writes it all the same.
        let path = options.dataDirectory + "/" + name
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
        try handle.close()
    }

    /// `SNIFFMEET_EMBEDDED_PRELOAD`: server libraries to load at start, for diagnosis
    /// (`pg_stat_statements` in `scripts/bench-http`'s `PG_STATEMENTS=1`); names only, since the
    /// value reaches pg_ctl's shell.
    static var preloadLibraries: String? {
        guard let value = ProcessInfo.processInfo.environment["SNIFFMEET_EMBEDDED_PRELOAD"], !value.isEmpty else { return nil }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz_,".utf8)
        return value.utf8.allSatisfy(allowed.contains) ? value : nil
    }

    /// The postmaster's options; pg_ctl hands them to a shell, hence the quoting.
    private var serverOptions: String {
        var serverOptions = "-k " + Self.shellQuoted(socketDirectory)
        if !options.durable { serverOptions += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off" }
        if let preload = Self.preloadLibraries { serverOptions += " -c shared_preload_libraries=" + preload }
        return serverOptions
    }

    /// Creates the owner and runtime logins and the runtime group unless they exist (roles
    /// belong to the whole cluster). Trust authentication on the private socket: no passwords.
    public func createRoles() throws {
        let connection = try Connection(connectionString: connectionString())
        // Role names are this type's constants; identifiers cannot be parameters.
        try connection.transaction { connection in
            // Two processes opening the cluster at once must not both create a role.
            try connection.execute("SELECT pg_advisory_xact_lock(7336224419)")
            try connection.executeScript(
                """
                DO $$
                BEGIN
                    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(Self.runtimeGroup)') THEN
                        CREATE ROLE \(Self.runtimeGroup) NOLOGIN;
                    END IF;
                    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(Self.ownerLogin)') THEN
                        CREATE ROLE \(Self.ownerLogin) LOGIN CREATEDB;
                    END IF;
                    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(Self.runtimeLogin)') THEN
                        CREATE ROLE \(Self.runtimeLogin) LOGIN IN ROLE \(Self.runtimeGroup);
                    END IF;
                END
                $$;
                """
            )
        }
    }

    /// Creates a database unless it exists (optionally as a copy of `template`, owned by `owner`).
    public func createDatabase(_ name: String, template: String? = nil, owner: String? = nil) throws {
        for candidate in [name] + (template.map { [$0] } ?? []) + (owner.map { [$0] } ?? []) {
            guard Self.isPlainIdentifier(candidate) else { throw Failure.invalidDatabaseName(candidate) }
        }
        let connection = try Connection(connectionString: connectionString())
        let exists = try connection.execute("SELECT 1 FROM pg_database WHERE datname = $1", [name]).count > 0
        if exists { return }
        // Identifiers cannot be parameters; the names were checked against a strict pattern above.
        try connection.execute(
            "CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0)" } ?? "")
                + (owner.map { " OWNER \($0)" } ?? "")
        )
    }

    /// The login that owns `database`'s schema and so runs its migrations: the owner of its
    /// `events` table, else of the database. That is `ownerLogin` for databases created here;
    /// in data folders of earlier versions, where the superuser made and owns everything, it
    /// stays the superuser (a later migration could hand the objects over; until then the
    /// runtime login is still confined by the grants of migration 0006).
    public func schemaOwner(database: String) throws -> String {
        let connection = try Connection(connectionString: connectionString(database: database))
        return try connection.execute(
            """
            SELECT coalesce((SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = to_regclass('events')),
                            (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()))
            """
        ).first!.string(0)
    }

    // MARK: Helpers

    /// The path of the installed PostgreSQL program `name` (`pg_dump`, `pgbench`, …) beside
    /// the server binaries this launcher uses, if there is one.
    public static func tool(_ name: String) -> String? {
        findBinDirectory().map { $0 + "/" + name }.flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil }
    }

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

    /// Makes `path` a folder only the cluster's user can enter. A missing one is created with
    /// mode 0700 (and handed to that user when we are root). An existing one must belong to us
    /// or to that user and be closed to everyone else: we never loosen or take over a folder
    /// someone else prepared, since whoever can enter it can reach the trusting socket.
    private func makePrivateDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else { throw Failure.unsafeDirectory(path: path, reason: String(cString: strerror(errno))) }
            let parent = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            if mkdir(path, 0o700) == 0 {
                // mkdir applies the umask; the mode must be exactly 0700 whatever it is.
                chmod(path, 0o700)
                try handOver(path)
                return
            }
            guard errno == EEXIST, stat(path, &info) == 0 else {
                throw Failure.unsafeDirectory(path: path, reason: String(cString: strerror(errno)))
            }
            // Created by someone else meanwhile: checked like any existing folder.
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw Failure.unsafeDirectory(path: path, reason: "it is not a folder") }
        let clusterUser = runAs?.uid ?? geteuid()
        guard info.st_uid == clusterUser || info.st_uid == geteuid() else {
            throw Failure.unsafeDirectory(
                path: path,
                reason:
                    "it belongs to \(Self.userName(info.st_uid)), not to \(Self.userName(clusterUser))\(runAs == nil ? "" : " (who runs the cluster)")"
            )
        }
        let mode = info.st_mode & 0o7777
        guard mode & 0o077 == 0 else {
            throw Failure.unsafeDirectory(
                path: path,
                reason: "its mode \(String(mode, radix: 8)) lets others in; the cluster's folders must be private (chmod 700 \(path))"
            )
        }
        if info.st_uid != clusterUser {
            // Ours (we are root) and private, but the cluster user could not use it. Only an
            // empty one is handed over, as if we had just made it.
            guard ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [""]).isEmpty else {
                throw Failure.unsafeDirectory(
                    path: path,
                    reason: "it belongs to root, but the cluster runs as \(runAs?.name ?? "?"); chown -R \(runAs?.name ?? "?") \(path)"
                )
            }
            try handOver(path)
        }
    }

    /// As root: gives a folder we made to the user the cluster runs as.
    private func handOver(_ path: String) throws {
        guard let runAs else { return }
        guard chown(path, runAs.uid, runAs.gid) == 0 else {
            throw Failure.commandFailed(command: "chown \(runAs.name) \(path)", output: String(cString: strerror(errno)))
        }
    }

    private static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid) else { return "uid \(uid)" }
        return String(cString: entry.pointee.pw_name)
    }

    /// The socket folder of the server running on the data folder: line 5 of postmaster.pid.
    private func runningSocketDirectory() -> String? {
        guard let text = try? String(contentsOfFile: options.dataDirectory + "/postmaster.pid", encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 4, !lines[4].isEmpty else { return nil }
        return String(lines[4])
    }

    /// Lowercase letters, digits and _, starting with a letter: safe to interpolate as an identifier.
    static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first), name.utf8.count <= 63 else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// A value for a libpq key=value connection string: single-quoted, backslashes and quotes escaped.
    static func conninfoQuoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// A word for /bin/sh: single-quoted, each ' written as '\''.
    static func shellQuoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Runs a server binary, as the unprivileged user when we are root; returns its output.
    ///
    /// Through `ChildProcess`: Foundation's Process can miss the exit of a child whose own child
    /// (the postmaster) lives on.
    @discardableResult
    private func run(_ executable: String, _ arguments: [String]) throws -> String {
        // As root: run as the cluster user, from / (it may not be able to enter our directory).
        let argv: [String] =
            runAs.map { ["/usr/sbin/runuser", "-u", $0.name, "--", "/usr/bin/env", "-C", "/", executable] + arguments }
            ?? [executable] + arguments
        let outputPath = NSTemporaryDirectory() + "sniffmeet-cmd-\(UUID().uuidString).out"
        defer { unlink(outputPath) }
        let status: Int32
        do {
            status = try ChildProcess.run(argv, output: outputPath)
        } catch {
            throw Failure.commandFailed(command: argv.joined(separator: " "), output: error.message)
        }
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw Failure.commandFailed(command: argv.joined(separator: " "), output: text)
        }
        return text
    }
}
