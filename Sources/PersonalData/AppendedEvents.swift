import Domain
import Foundation
import Synchronization

/// Events this process appended, by event id, until its projectors read them back (each once).
///
/// Bounded by two generations (`GenerationalMap`): events whose projectors run in another
/// process are never taken here and pass out with their generation, freed off the lock.
final class AppendedEvents: Sendable {
    private let events: Mutex<GenerationalMap<UUID, Event>>

    /// Holds at most `capacity` events.
    init(capacity: Int) { events = Mutex(GenerationalMap(capacity: max(1, capacity / 2))) }

    func remember(_ appended: some Sequence<(UUID, Event)>) {
        events.withLock { events in
            for (id, event) in appended { events.set(event, for: id) }
        }
    }

    /// The remembered events of `ids` (nil where not remembered), forgetting them.
    func take(_ ids: [UUID]) -> [Event?] {
        events.withLock { events in
            guard events.count > 0 else { return Array(repeating: nil, count: ids.count) }
            return ids.map { id in
                let event = events.peek(id)
                if event != nil { events.removeValue(for: id) }
                return event
            }
        }
    }

    func forgetAll() {
        events.withLock { $0.removeAll() }
    }
}
