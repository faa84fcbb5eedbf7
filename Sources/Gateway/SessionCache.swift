import Foundation
import Synchronization

/// Recently confirmed sessions by token hash, shared by all requests of a process.
///
/// Keyed by the SHA-256 of the token (never the token itself), filled only after the database
/// confirmed the hash, and trusted for `maxAge` at most: a session revoked on another process
/// whose announcement was lost stops working here within that time. When full it is simply
/// emptied: a miss only costs one query.
final class SessionCache: Sendable {
    private struct Entry {
        var caller: Caller
        var loaded: ContinuousClock.Instant
    }

    private let capacity: Int
    private let maxAge: Duration
    private let entries = Mutex<[Data: Entry]>([:])

    init(capacity: Int, maxAge: Duration) {
        self.capacity = capacity
        self.maxAge = maxAge
    }

    func caller(for hash: Data) -> Caller? {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries[hash] else { return nil }
            guard now - entry.loaded < maxAge else {
                entries[hash] = nil
                return nil
            }
            return entry.caller
        }
    }

    func remember(_ hash: Data, _ caller: Caller) {
        let entry = Entry(caller: caller, loaded: .now)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[hash] = entry
        }
    }

    /// Forgets every cached session of `user`.
    func forget(user: UUID) {
        entries.withLock { entries in entries = entries.filter { $0.value.caller.user != user } }
    }

    /// Forgets everything (a revocation was announced, or the listener reconnected).
    func forgetAll() {
        entries.withLock { $0.removeAll(keepingCapacity: true) }
    }
}
