import Foundation
import Synchronization

/// Runs blocking libpq work (rebuild, verify, replay) on a thread of its own, so it never
/// occupies one of Swift's few cooperative threads.
func onThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}

/// Set by Ctrl-C: long jobs stop between batches and leave things resumable. A second Ctrl-C
/// exits at once (the server rolls back the open transaction).
final class InterruptFlag: @unchecked Sendable {
    private let raised = Mutex(0)
    // Kept alive for the life of the flag; only touched in init.
    private var source: (any DispatchSourceSignal)?

    init() {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue.global())
        self.source = source
        source.setEventHandler { [self] in
            let count = raised.withLock {
                $0 += 1
                return $0
            }
            if count >= 2 { exit(130) }
            FileHandle.standardError.write(Data("\ninterrupted: stopping after the current batch (Ctrl-C again to quit now)\n".utf8))
        }
        source.resume()
    }

    var isRaised: Bool { raised.withLock { $0 } > 0 }
}

/// Progress on stderr: a bar redrawn in place on a terminal, else a log line every few seconds.
final class ProgressPrinter: Sendable {
    private let terminal = isatty(STDERR_FILENO) == 1
    private let last = Mutex(Date.distantPast)
    private let interval: TimeInterval

    init(logInterval: TimeInterval = 5) { self.interval = logInterval }

    /// Ends the bar's line on a terminal.
    func finish() { if terminal { FileHandle.standardError.write(Data("\n".utf8)) } }

    func show(_ text: @autoclosure () -> String, bar: @autoclosure () -> String, final: Bool = false) {
        let now = Date()
        let due = last.withLock { last -> Bool in
            let gap = terminal ? 0.1 : interval
            guard final || now.timeIntervalSince(last) >= gap else { return false }
            last = now
            return true
        }
        guard due else { return }
        if terminal {
            FileHandle.standardError.write(Data((bar() + (final ? "\n" : "")).utf8))
        } else {
            FileHandle.standardError.write(Data((ISO8601DateFormatter().string(from: now) + " " + text() + "\n").utf8))
        }
    }
}
