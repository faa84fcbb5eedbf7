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
/// its expected version; other processes' appends are simply the events read after it. When
/// full, the cache is emptied (simpler than LRU; a miss costs one full read).
public final class StreamCache: Sendable {
    struct Entry {
        var version: Int64
        var state: StreamState
    }

    private let capacity: Int
    private let entries = Mutex<[StreamName: Entry]>([:])

    public init(capacity: Int = 50_000) {
        self.capacity = capacity
    }

    func entry(_ stream: StreamName) -> Entry? {
        entries.withLock { $0[stream] }
    }

    /// Remembers `state` at `version`, unless a newer one is known.
    func remember(_ stream: StreamName, version: Int64, state: StreamState) {
        entries.withLock { entries in
            if let known = entries[stream], known.version >= version { return }
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[stream] = Entry(version: version, state: state)
        }
    }

    /// Forgets every state (a stream's meaning changed underneath, e.g. a rebuild in tests).
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }
}
