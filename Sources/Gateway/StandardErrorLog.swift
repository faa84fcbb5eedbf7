import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where `LogfmtLogHandler` writes: standard error, one `write(2)` per line until `startBuffering`,
/// then lines below `warning` in batches.
///
/// A busy server logs a line per request; their `write` calls were 2 % of a `GET /v1/me/mates`'s
/// server CPU under `scripts/bench-http`. Buffered, they go out together at most `interval` (50 ms) later
/// (or once `capacity` bytes wait); a warning or worse goes at once, after everything that waited,
/// so the order of lines never changes. What waits when the process is killed (`kill -9`, a
/// crash) is lost: at most `interval`'s worth of info lines. A normal exit writes it (`atexit`).
public final class StandardErrorLog: Sendable {
    /// The process's standard error.
    public static let shared = StandardErrorLog(descriptor: STDERR_FILENO, interval: .milliseconds(50))

    /// The longest an info line waits.
    let interval: Duration
    /// Bytes that are written at once rather than waiting for the interval.
    static let capacity = 64 * 1024

    private struct State {
        var buffering = false
        var pending: [UInt8] = []
    }
    private let state = Mutex(State())
    private let descriptor: Int32

    /// A log writing to the open file `descriptor` (tests give a pipe).
    init(descriptor: Int32, interval: Duration) {
        self.descriptor = descriptor
        self.interval = interval
    }

    /// Writes `line` now, or with the next batch when buffering and `level` is below `warning`.
    public func write(_ line: [UInt8], level: Logger.Level) {
        state.withLock { state in
            guard state.buffering else {
                writeAll(line)
                return
            }
            state.pending += line
            // Written under the lock: a line written by another thread meanwhile cannot overtake these.
            if level >= .warning || state.pending.count >= Self.capacity { flush(&state) }
        }
    }

    /// From now on, info lines wait for their batch (`sniffmeet serve` once it is up: the lines
    /// of starting up, which scripts read, are written at once).
    public func startBuffering() {
        let started = state.withLock { state -> Bool in
            defer { state.buffering = true }
            return !state.buffering
        }
        guard started else { return }
        if self === Self.shared { atexit { StandardErrorLog.shared.flush() } }
        let (seconds, attoseconds) = interval.components
        let pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        let thread = Thread { [weak self] in
            while true {
                var remaining = pause
                nanosleep(&remaining, nil)
                guard let self else { return }
                flush()
            }
        }
        thread.name = "sniffmeet.log-writer"
        thread.start()
    }

    /// Writes whatever waits.
    public func flush() {
        state.withLock { flush(&$0) }
    }

    private func flush(_ state: inout State) {
        guard !state.pending.isEmpty else { return }
        writeAll(state.pending)
        state.pending.removeAll(keepingCapacity: true)
    }

    /// All of `bytes`, however many `write` calls it takes (a pipe may take less than all).
    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return  // Nowhere to write to (closed, full disk): logging must not stop the server.
                }
            }
        }
    }
}
