import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starts a program and waits for it: the embedded cluster's server binaries and the
/// benchmarks' pgbench.
///
/// posix_spawn and waitpid rather than Foundation's `Process`, for two reasons: `Process` can
/// miss the exit of a child whose own child (the postmaster) lives on; and a child inherits
/// the spawning thread's signal mask, in which Swift's threads block signals (pgbench ends a
/// `-T` run on SIGALRM and then never stops). The child starts with no signal blocked and
/// default handlers, stdin from /dev/null and stdout and stderr to a file (not a pipe: the
/// postmaster inherits descriptors and never closes them).
public enum ChildProcess {
    /// Runs `arguments` (program path first) with its output to the file `output`; returns the
    /// exit status (128 + signal when killed), or throws the `posix_spawn` error's text. Blocks.
    public static func run(_ arguments: [String], output: String) throws(SpawnError) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArguments = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, cArguments, environ)
        guard spawned == 0 else { throw SpawnError(message: "cannot start \(arguments[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED: the exit status; else the signal that ended it.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// A program that could not be started.
    public struct SpawnError: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
