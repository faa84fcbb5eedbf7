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
///
/// Long streams (at least `longStream` events: a conversation, a user with many mates) have
/// generations of their own. Folding one again costs what it holds, hundreds of events, where a
/// new user's stream costs one; a burst of new streams passes through the short ones' map and
/// never pushes a long one out. Under `scripts/bench-http`, every round's sign-ups emptied the
/// one map, and each round's first sends folded every conversation again from its first
/// message: the sends' p99 grew with the conversations' length.
public final class StreamCache: Sendable {
    struct Entry {
        var version: Int64
        var state: StreamState
    }

    private struct Maps {
        var short: GenerationalMap<StreamName, Entry>
        var long: GenerationalMap<StreamName, Entry>
    }

    private let maps: Mutex<Maps>
    /// Events from which a stream counts as long.
    let longStream: Int64

    /// Short streams held unless the operators say otherwise (`SNIFFMEET_STREAM_CACHE_STATES`):
    /// about 550 bytes each (docs/benchmarks.md, "The command side's stream cache").
    public static let defaultStates = 200_000

    /// `capacity`: states per generation (at most twice that are held: `defaultStates` by default);
    /// `longCapacity`: the same for long streams, those of at least `longStream` events.
    public init(capacity: Int = defaultStates / 2, longCapacity: Int = 2_500, longStream: Int64 = 64) {
        maps = Mutex(Maps(short: GenerationalMap(capacity: capacity), long: GenerationalMap(capacity: longCapacity)))
        self.longStream = longStream
    }

    func entry(_ stream: StreamName) -> Entry? {
        maps.withLock { $0.long.value(for: stream) ?? $0.short.value(for: stream) }
    }

    /// A cache holding at most `states` short streams (two generations of half as many), the
    /// operators' setting (`SNIFFMEET_STREAM_CACHE_STATES`; by default `defaultStates`).
    /// Long streams keep their own bound: a conversation's state holds every message's facts, and
    /// scaling their number with this setting could cost gigabytes.
    public convenience init(states: Int) {
        self.init(capacity: max(1, states / 2))
    }

    /// Remembers `state` at `version`, unless a newer one is known.
    func remember(_ stream: StreamName, version: Int64, state: StreamState) {
        maps.withLock { maps in
            if let known = maps.long.peek(stream) ?? maps.short.peek(stream), known.version >= version { return }
            if version >= longStream {
                maps.short.removeValue(for: stream)
                maps.long.set(Entry(version: version, state: state), for: stream)
            } else {
                maps.short.set(Entry(version: version, state: state), for: stream)
            }
        }
    }

    /// States per generation, short and long streams.
    var capacity: Int { maps.withLock { $0.short.capacity } }
    var longCapacity: Int { maps.withLock { $0.long.capacity } }

    /// How many states are held (every generation).
    var count: Int { maps.withLock { $0.short.count + $0.long.count } }

    /// Forgets every state (a stream's meaning changed underneath, e.g. a rebuild in tests).
    public func removeAll() {
        maps.withLock {
            $0.short.removeAll()
            $0.long.removeAll()
        }
    }
}
