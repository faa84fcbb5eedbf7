import Foundation
import PersonalData
import Synchronization

/// Recently confirmed sessions by token hash, shared by all requests of a process.
///
/// Keyed by the SHA-256 of the token (never the token itself), filled only after the database
/// confirmed the hash, and trusted for `maxAge` at most: a session revoked on another process
/// whose announcement was lost stops working here within that time. Bounded by two generations
/// (`GenerationalMap`): sessions in use stay while a burst of sign-ups passes through, and a
/// dropped generation is freed off the lock. A miss only costs one query.
final class SessionCache: Sendable {
    private struct Entry {
        var caller: Caller
        var loaded: ContinuousClock.Instant
    }

    private let maxAge: Duration
    private let entries: Mutex<GenerationalMap<Data, Entry>>

    /// Holds at most `capacity` sessions.
    init(capacity: Int, maxAge: Duration) {
        self.maxAge = maxAge
        self.entries = Mutex(GenerationalMap(capacity: max(1, capacity / 2)))
    }

    func caller(for hash: Data) -> Caller? {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries.value(for: hash) else { return nil }
            guard now - entry.loaded < maxAge else {
                entries.removeValue(for: hash)
                return nil
            }
            return entry.caller
        }
    }

    func remember(_ hash: Data, _ caller: Caller) {
        let entry = Entry(caller: caller, loaded: .now)
        entries.withLock { $0.set(entry, for: hash) }
    }

    /// Forgets every cached session of `user`.
    func forget(user: UUID) {
        entries.withLock { entries in entries.filter { $0.caller.user != user } }
    }

    /// Forgets everything (a revocation was announced, or the listener reconnected).
    func forgetAll() {
        entries.withLock { $0.removeAll() }
    }
}
