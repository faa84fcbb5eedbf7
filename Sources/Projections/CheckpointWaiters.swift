import EventLog
import Foundation
import Synchronization

/// Callers of `ProjectionRunner.waitUntil` parked until the projectors they name pass a position.
///
/// Each waiter is resumed once, by the batch that satisfies it (or by its timeout, cancellation,
/// or a change of ownership), instead of every waiter waking on every batch: under a steady
/// command stream hundreds of requests wait at once and batches commit hundreds of times a
/// second.
final class CheckpointWaiters: Sendable {
    /// Why a wait ended.
    enum Wake: Sendable { case reached, timedOut, lookAgain }

    private struct Waiter {
        var position: LogPosition
        var names: [String]
        var continuation: CheckedContinuation<Wake, Never>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Parks until `reached(names, position)` holds at a `checkpointsMoved` call, `timeout`
    /// passes, or `ownershipChanged` is called. `reached` is first checked at once, under the
    /// same lock the runner's updates take, so no move is missed between check and park.
    func wait(
        until position: LogPosition,
        names: [String],
        timeout: Duration,
        reached: @Sendable ([String], LogPosition) -> Bool
    ) async -> Wake {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.resume(id, with: .timedOut)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Wake, Never>) in
                let now: Wake? = state.withLock { state in
                    if Task.isCancelled { return .lookAgain }
                    if reached(names, position) { return .reached }
                    state.waiters[id] = Waiter(position: position, names: names, continuation: continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            resume(id, with: .lookAgain)
        }
    }

    /// Runs `update` (which moves the runner's checkpoints) and resumes every waiter that
    /// `reached` now satisfies, atomically with respect to `wait`.
    func checkpointsMoved(_ update: () -> Void, reached: ([String], LogPosition) -> Bool) {
        let ready = state.withLock { state -> [CheckedContinuation<Wake, Never>] in
            update()
            var ready: [CheckedContinuation<Wake, Never>] = []
            for (id, waiter) in state.waiters where reached(waiter.names, waiter.position) {
                ready.append(waiter.continuation)
                state.waiters[id] = nil
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: .reached) }
    }

    /// Ownership moved (gained, lost, failed): every waiter looks again, possibly at the database.
    func ownershipChanged(_ update: () -> Void) {
        let all = state.withLock { state -> [CheckedContinuation<Wake, Never>] in
            update()
            defer { state.waiters.removeAll() }
            return state.waiters.values.map(\.continuation)
        }
        for continuation in all { continuation.resume(returning: .lookAgain) }
    }

    private func resume(_ id: UInt64, with wake: Wake) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: wake)
    }
}
