@preconcurrency import Crypto
import Foundation
import PersonalData
import Postgres
import Synchronization

/// Recently confirmed sessions by token hash, shared by all requests of a process.
///
/// Keyed by the SHA-256 of the token (never the token itself) and filled only after the database
/// confirmed the hash, or once this process's sign-up that opened the session committed. Every
/// announced revocation empties it (`forgetAll`, from the process's listener), so an entry is
/// trusted while announcements are known to arrive: for `maxAge`
/// after it was loaded, and beyond that as long as the listener's latest check
/// (`ListenerConfirmation`) is younger than `maxAge`, since every revocation announced before
/// that check has emptied the cache. A listener that stops confirming (its connection hangs or
/// drops) leaves entries `maxAge` at most: a session revoked on another process stops working
/// here within `maxAge` either way. Without that confirmation every request of a user who had
/// not been seen in the last second read the session again (every mate acceptance of
/// `scripts/bench-http`, and most requests of a phone app).
///
/// Bounded by two generations (`GenerationalMap`): sessions in use stay while a burst of
/// sign-ups passes through, and a dropped generation is freed off the lock. A miss costs one
/// query, and a trip to a connection's thread and back. An entry is 96 bytes in its generation's
/// table (the digest's 32 inline, no allocation of its own), whose size is a power of two at most
/// three quarters full: the default 390,000 sessions (`SessionStore.defaultCachedSessions`, two
/// generations of 195,000 in tables of 262,144) take 50 MB.
final class SessionCache: Sendable {
    private struct Entry {
        var caller: Caller
        var loaded: ContinuousClock.Instant
        /// When the session's `last_seen_at` is next due to move (`SessionStore.lastSeenStep`
        /// after it last moved): an entry may serve for longer than that.
        var lastSeenDue: ContinuousClock.Instant
    }

    private struct State {
        var entries: GenerationalMap<SHA256Digest, Entry>
        /// Moves at every `forgetAll`: a session read before it is not remembered after it (its
        /// revocation may be what emptied the cache).
        var generation: UInt64 = 0
    }

    private let maxAge: Duration
    /// How often a session's `last_seen_at` moves while it is in use.
    private let lastSeenStep: Duration
    private let state: Mutex<State>
    /// The revocations listener's checks (`ListenerConfirmation`); entries older than `maxAge`
    /// are trusted only while its latest check is younger than that.
    let revocationsConfirmed: ListenerConfirmation

    /// Holds at most `capacity` sessions.
    init(
        capacity: Int,
        maxAge: Duration,
        lastSeenStep: Duration = .seconds(60),
        revocationsConfirmed: ListenerConfirmation = ListenerConfirmation()
    ) {
        self.maxAge = maxAge
        self.lastSeenStep = lastSeenStep
        self.state = Mutex(State(entries: GenerationalMap(capacity: max(1, capacity / 2))))
        self.revocationsConfirmed = revocationsConfirmed
    }

    /// The cached caller of `hash`, if it may still be trusted, and whether its `last_seen_at`
    /// is due to move now (then the next move is due `lastSeenStep` later).
    func caller(for hash: SHA256Digest) -> (caller: Caller, lastSeenDue: Bool)? {
        let now = ContinuousClock.now
        let confirmed = revocationsConfirmed.confirmedAt.map { now - $0 < maxAge } ?? false
        return state.withLock { state in
            guard var entry = state.entries.value(for: hash) else { return nil }
            guard confirmed || now - entry.loaded < maxAge else {
                state.entries.removeValue(for: hash)
                return nil
            }
            guard now >= entry.lastSeenDue else { return (entry.caller, false) }
            entry.lastSeenDue = now + lastSeenStep
            state.entries.set(entry, for: hash)
            return (entry.caller, true)
        }
    }

    /// The generation to pass to `remember` for a session about to be read.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Remembers `caller`, read from the database after `generation` was taken, unless the cache
    /// was emptied since; its `last_seen_at` is next due to move after `lastSeenIn` (by default
    /// a whole step: it just moved).
    func remember(_ hash: SHA256Digest, _ caller: Caller, readIn generation: UInt64, lastSeenIn: Duration? = nil) {
        let now = ContinuousClock.now
        let entry = Entry(caller: caller, loaded: now, lastSeenDue: now + (lastSeenIn ?? lastSeenStep))
        state.withLock { state in
            guard state.generation == generation else { return }
            state.entries.set(entry, for: hash)
        }
    }

    /// Forgets every cached session of `user`.
    func forget(user: UUID) {
        state.withLock { state in
            state.generation &+= 1
            state.entries.filter { $0.caller.user != user }
        }
    }

    /// Forgets everything (a revocation was announced, or the listener reconnected).
    func forgetAll() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll()
        }
    }
}
