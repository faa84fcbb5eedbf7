import Domain
import Foundation
import Synchronization

/// Which pair each mate request belongs to, as this process has seen: a request's pair never
/// changes once its `mate_requested` is in the log, so an accept, decline or cancel of a
/// request made or looked up here finds its pair without the round trip to the log's index
/// that answering it otherwise costs first. When full, it is emptied (a miss costs that read).
final class RequestPairs: Sendable {
    private let capacity: Int
    private let pairs = Mutex<[UUID: MatePair]>([:])

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    func pair(of request: UUID) -> MatePair? {
        pairs.withLock { $0[request] }
    }

    func remember(_ request: UUID, _ pair: MatePair) {
        pairs.withLock { pairs in
            if pairs.count >= capacity { pairs.removeAll(keepingCapacity: true) }
            pairs[request] = pair
        }
    }

    /// Remembers the requests that committed `events` made.
    func remember(_ events: [(stream: StreamName, event: Event)]) {
        for case (_, .mateRequested(let requested)) in events { remember(requested.requestID, MatePair(requested.from, requested.to)) }
    }
}
