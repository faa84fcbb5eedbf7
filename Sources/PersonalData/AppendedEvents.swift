import Domain
import Foundation
import Synchronization

/// Events this process appended, by event id, until its projectors read them back (each once).
final class AppendedEvents: Sendable {
    private let capacity: Int
    private let events = Mutex<[UUID: Event]>([:])

    init(capacity: Int) { self.capacity = capacity }

    func remember(_ appended: some Sequence<(UUID, Event)>) {
        events.withLock { events in
            // Projectors owned by another process never read them here: start over when full.
            if events.count >= capacity { events.removeAll(keepingCapacity: true) }
            for (id, event) in appended { events[id] = event }
        }
    }

    /// The remembered events of `ids` (nil where not remembered), forgetting them.
    func take(_ ids: [UUID]) -> [Event?] {
        events.withLock { events in
            guard !events.isEmpty else { return Array(repeating: nil, count: ids.count) }
            return ids.map { events.removeValue(forKey: $0) }
        }
    }

    func forgetAll() {
        events.withLock { $0.removeAll() }
    }
}
