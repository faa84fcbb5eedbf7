import Domain
import Foundation
import PersonalData
import Synchronization

/// Which pair each mate request belongs to, as this process has seen: a request's pair never
/// changes once its `mate_requested` is in the log, so an accept, decline or cancel of a
/// request made or looked up here finds its pair without the round trip to the log's index
/// that answering it otherwise costs first (a miss costs that read).
///
/// Held in two generations (`GenerationalMap`) of `capacity` requests each, so the newest
/// requests are always known, however many came before. (Emptied whole when full, as it once
/// was, a flood of requests forgot the very ones about to be accepted: in a `scripts/bench-http`
/// round 0.72 of every accept looked its pair up in the log, and the emptying freed 100,000
/// entries under the lock.)
final class RequestPairs: Sendable {
    private let pairs: Mutex<GenerationalMap<UUID, MatePair>>

    init(capacity: Int = 100_000) {
        pairs = Mutex(GenerationalMap(capacity: capacity))
    }

    func pair(of request: UUID) -> MatePair? {
        pairs.withLock { $0.value(for: request) }
    }

    func remember(_ request: UUID, _ pair: MatePair) {
        pairs.withLock { $0.set(pair, for: request) }
    }

    /// Remembers the requests that committed `events` made.
    func remember(_ events: [(stream: StreamName, event: Event)]) {
        for case (_, .mateRequested(let requested)) in events { remember(requested.requestID, MatePair(requested.from, requested.to)) }
    }
}
