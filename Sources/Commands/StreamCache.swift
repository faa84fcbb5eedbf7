import Domain
import Foundation
import Synchronization

/// Folded stream states this process has seen, by stream, with the version they are at.
///
/// Loading a stream then reads only the events after the cached version (almost always none:
/// one index probe) instead of reading and decoding the whole stream again: JSON decoding of
/// events was a tenth of the server's CPU per SendWalk, and user streams keep growing.
///
/// A cached state is always the fold of exactly the stream's first `version` events, because
/// it comes either from a read of the log or from an append that succeeded with `version` as
/// its expected version; other processes' appends are simply the events read after it.
///
/// Two generations bound it (an approximate LRU without per-hit bookkeeping): states go into the
/// young one; when it holds `capacity`, it becomes the old one and the previous old one is
/// dropped; a state found in the old generation moves back into the young one. Streams in use
/// (a busy conversation, a user who keeps sending) so stay cached, however many new streams a
/// burst of sign-ups adds. Emptying the whole cache when full, as before, made every stream load
/// again from its first event right after each burst (`scripts/bench-http`: chat sends slowed
/// round after round as conversations grew).
public final class StreamCache: Sendable {
    struct Entry {
        var version: Int64
        var state: StreamState
    }

    struct Generations {
        var young: [StreamName: Entry] = [:]
        var old: [StreamName: Entry] = [:]

        /// Puts `entry` into the young generation, turning it old when full.
        mutating func keep(_ stream: StreamName, _ entry: Entry, capacity: Int) {
            if young.count >= capacity, young[stream] == nil {
                old = young
                young = [:]
                young.reserveCapacity(capacity)
            }
            young[stream] = entry
        }
    }

    private let capacity: Int
    private let generations = Mutex(Generations())

    /// `capacity`: states per generation (at most twice that are held: 50,000 by default).
    public init(capacity: Int = 25_000) {
        self.capacity = capacity
    }

    func entry(_ stream: StreamName) -> Entry? {
        generations.withLock { generations in
            if let young = generations.young[stream] { return young }
            guard let old = generations.old.removeValue(forKey: stream) else { return nil }
            generations.keep(stream, old, capacity: capacity)
            return old
        }
    }

    /// Remembers `state` at `version`, unless a newer one is known.
    func remember(_ stream: StreamName, version: Int64, state: StreamState) {
        generations.withLock { generations in
            if let known = generations.young[stream] ?? generations.old[stream], known.version >= version { return }
            generations.old[stream] = nil
            generations.keep(stream, Entry(version: version, state: state), capacity: capacity)
        }
    }

    /// How many states are held (both generations).
    var count: Int { generations.withLock { $0.young.count + $0.old.count } }

    /// Forgets every state (a stream's meaning changed underneath, e.g. a rebuild in tests).
    public func removeAll() {
        generations.withLock { $0 = Generations() }
    }
}
