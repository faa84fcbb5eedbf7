import Domain
import Foundation
import PersonalData
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
/// Two generations bound it (`GenerationalMap`): streams in use (a busy conversation, a user who
/// keeps sending) stay cached, however many new streams a burst of sign-ups adds. Emptying the
/// whole cache when full, as before, made every stream in use load again from its first event
/// after each such burst (`scripts/bench-http` adds more than 50,000 streams per round).
public final class StreamCache: Sendable {
    struct Entry {
        var version: Int64
        var state: StreamState
    }

    private let entries: Mutex<GenerationalMap<StreamName, Entry>>

    /// `capacity`: states per generation (at most twice that are held: 50,000 by default).
    public init(capacity: Int = 25_000) {
        entries = Mutex(GenerationalMap(capacity: capacity))
    }

    func entry(_ stream: StreamName) -> Entry? {
        entries.withLock { $0.value(for: stream) }
    }

    /// Remembers `state` at `version`, unless a newer one is known.
    func remember(_ stream: StreamName, version: Int64, state: StreamState) {
        entries.withLock { entries in
            if let known = entries.peek(stream), known.version >= version { return }
            entries.set(Entry(version: version, state: state), for: stream)
        }
    }

    /// How many states are held (both generations).
    var count: Int { entries.withLock { $0.count } }

    /// Forgets every state (a stream's meaning changed underneath, e.g. a rebuild in tests).
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }
}
