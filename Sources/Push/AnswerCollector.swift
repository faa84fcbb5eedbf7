import Synchronization

/// Gathers the answers of a batch of pushes as the connection's event loop reports them, and
/// hands them to the delivery loop a chunk at a time: one wake-up per chunk, not per push.
final class AnswerCollector: Sendable {
    struct Answer: Sendable {
        var index: Int
        var outcome: APNsOutcome
    }

    private struct State {
        var ready: [Answer] = []
        var answered = 0
        var waiter: CheckedContinuation<[Answer]?, Never>?
    }

    private let count: Int
    private let every: Int
    private let state = Mutex(State())

    /// For `count` pushes, handed on `every` answers at a time (and the rest at the end).
    init(count: Int, every: Int) {
        self.count = count
        self.every = max(1, every)
    }

    /// An answer came.
    func add(_ index: Int, _ outcome: APNsOutcome) {
        let handOver = state.withLock { state -> (CheckedContinuation<[Answer]?, Never>, [Answer])? in
            state.ready.append(Answer(index: index, outcome: outcome))
            state.answered += 1
            guard let waiter = state.waiter, state.ready.count >= every || state.answered == count else { return nil }
            state.waiter = nil
            defer { state.ready = [] }
            return (waiter, state.ready)
        }
        if let (waiter, answers) = handOver { waiter.resume(returning: answers) }
    }

    /// The next chunk of answers, or nil when every push has been answered and handed over.
    func next() async -> [Answer]? {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> [Answer]?? in
                if state.ready.count >= every || (state.answered == count && !state.ready.isEmpty) {
                    defer { state.ready = [] }
                    return .some(state.ready)
                }
                if state.answered == count { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}
