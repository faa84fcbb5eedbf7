import Synchronization

/// Cancels request work that runs past its deadline. One sweeper task checks all running
/// requests every `resolution`, instead of a timer per request: a timer (a sleeping task, a
/// dispatch timer, a wake-up of dispatch's manager thread) cost about 5% of a GET's CPU under
/// `scripts/bench-http`. Deadlines fire up to `resolution` late.
final class RequestDeadlines: Sendable {
    /// A running request's task. `@unchecked Sendable` is sound: `cancel()` may be called from
    /// any thread, and the entry is removed (under the lock the sweeper also holds) before the
    /// task can end, so the sweeper never touches a finished task.
    private struct Running: @unchecked Sendable {
        let task: UnsafeCurrentTask
        let deadline: ContinuousClock.Instant
    }

    private struct State {
        var nextTicket: UInt64 = 0
        var running: [UInt64: Running] = [:]
    }

    private let state = Mutex(State())

    init(resolution: Duration = .milliseconds(50)) {
        Task.detached { [weak self] in
            // Ends once the middleware that owns it is gone.
            while true {
                try? await Task.sleep(for: resolution)
                guard let self else { return }
                self.cancelExpired(at: .now)
            }
        }
    }

    /// Runs `work` in the calling task; if the deadline passes first, the task is cancelled and
    /// whatever `work` throws then becomes `timedOut`. Work that finishes in spite of the
    /// cancellation keeps its answer.
    func run<T>(timeout: Duration, timedOut: any Error, _ work: () async throws -> T) async throws -> T {
        let ticket = withUnsafeCurrentTask { task -> UInt64? in
            guard let task else { return nil }
            return state.withLock { state in
                state.nextTicket += 1
                state.running[state.nextTicket] = Running(task: task, deadline: .now + timeout)
                return state.nextTicket
            }
        }
        do {
            let value = try await work()
            if let ticket { _ = finishExpired(ticket) }
            return value
        } catch {
            if let ticket, finishExpired(ticket) { throw timedOut }
            throw error
        }
    }

    /// Takes the request out; true when the sweeper already had (it expired and was cancelled).
    private func finishExpired(_ ticket: UInt64) -> Bool {
        state.withLock { $0.running.removeValue(forKey: ticket) } == nil
    }

    private func cancelExpired(at now: ContinuousClock.Instant) {
        state.withLock { state in
            for (ticket, running) in state.running where running.deadline <= now {
                running.task.cancel()
                state.running.removeValue(forKey: ticket)
            }
        }
    }
}
