import Domain
import Synchronization

/// Commands of this process on one hot stream, taken one at a time.
///
/// Appends to one stream are conditioned on its version, so of many concurrent commands on it
/// one wins each round trip and the rest conflict, read the stream again and retry: with n of
/// them that is about n²/2 attempts, and past the retry budget a `503`. Once a command has
/// conflicted on a stream it waits here for its turn on that stream, and so does every command
/// that touches the stream while others wait. Each then decides on the state its predecessor
/// left in the cache and appends without a conflict. Streams nobody waits for cost one atomic
/// load per command.
///
/// A command holds at most one turn and waits for a turn only while it holds none, so no two
/// commands can wait for each other.
final class StreamTurns: Sendable {
    private struct Line {
        /// Those waiting for the stream, first come first served; the holder is not among them.
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    /// One line per stream that has a holder.
    private let lines = Mutex<[StreamName: Line]>([:])
    /// How many streams have a holder: zero is the fast path.
    private let busy = Atomic<Int>(0)

    /// A stream among `streams` that someone holds, if any.
    func held(among streams: some Sequence<StreamName>) -> StreamName? {
        guard busy.load(ordering: .relaxed) > 0 else { return nil }
        return lines.withLock { lines in streams.first { lines[$0] != nil } }
    }

    /// Waits in line for a stream among `streams` that someone holds, if any, and returns it,
    /// held; nil (at once) when nobody holds any of them. The caller must `leave` it.
    func enterIfHeld(among streams: some Sequence<StreamName>) async -> StreamName? {
        guard let stream = held(among: streams) else { return nil }
        await enter(stream)
        return stream
    }

    /// How many wait for `stream`, its holder not counted.
    func waiting(for stream: StreamName) -> Int {
        lines.withLock { $0[stream]?.waiting.count ?? 0 }
    }

    /// Waits until the caller holds `stream`; it must `leave` it.
    func enter(_ stream: StreamName) async {
        guard !lines.withLock({ take(stream, &$0) }) else { return }
        await withCheckedContinuation { continuation in
            // The holder may have left since: then the turn is ours at once.
            let now = lines.withLock { lines in
                if take(stream, &lines) { return true }
                lines[stream]!.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Makes the caller the holder of `stream` if nobody holds it.
    private func take(_ stream: StreamName, _ lines: inout [StreamName: Line]) -> Bool {
        guard lines[stream] == nil else { return false }
        lines[stream] = Line()
        busy.add(1, ordering: .relaxed)
        return true
    }

    /// Hands `stream` to the next in line, or frees it.
    func leave(_ stream: StreamName) {
        let next = lines.withLock { lines -> CheckedContinuation<Void, Never>? in
            guard var line = lines[stream] else { return nil }
            guard !line.waiting.isEmpty else {
                lines[stream] = nil
                busy.subtract(1, ordering: .relaxed)
                return nil
            }
            let next = line.waiting.removeFirst()
            lines[stream] = line
            return next
        }
        next?.resume()
    }
}
