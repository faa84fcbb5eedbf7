import Foundation
import Synchronization

/// Wakes feed readers when new events may be readable.
///
/// A generation counter rather than a queue: a reader that was busy when a signal came sees the
/// counter moved and reads again, so no wake-up is ever lost.
public final class LogSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The current generation; pass it to `wait(since:timeout:)`.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// Something may have been appended.
    public func notify() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation &+= 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the generation moved past `generation`, or after `timeout` (the polling
    /// fallback), or at cancellation.
    public func wait(since generation: UInt64, timeout: Duration) async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter &+= 1
            return state.nextWaiter
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.wake(id)
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            wake(id)
        }
    }

    private func wake(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.resume()
    }
}
