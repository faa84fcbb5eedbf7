import Domain
import Foundation
import JSONText
import Logging

/// Log lines in logfmt, to standard error (`StandardErrorLog`):
///
///     2026-11-23T14:38:13.123Z info sniffmeet.gateway request method=GET path=/v1/me/mates request_id=… status=200 ms=1.9
///
/// Keys come sorted, values are quoted only when they need to be, so lines are easy to grep and
/// to parse (Loki, Vector, `jq -R`). It replaces swift-log's `StreamLogHandler`, whose per-line
/// work (local-time formatting, a lock, a buffered stream flushed every line) was about 5% of a
/// GET's CPU under `scripts/bench-http`; one request logs one line.
public struct LogfmtLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider? {
        get { fixed.metadataProvider }
        set { fixed = Fixed(label: fixed.label, metadataProvider: newValue, output: fixed.output) }
    }
    /// What never changes from copy to copy, behind one reference: the handler is then three
    /// words, which an existential holds inline. A request's logger is copied and given its
    /// request id; with the label, provider and output stored inline that copy boxed the whole
    /// handler anew each time.
    private var fixed: Fixed

    private final class Fixed: Sendable {
        let label: String
        let metadataProvider: Logger.MetadataProvider?
        let output: @Sendable ([UInt8], Logger.Level) -> Void

        init(label: String, metadataProvider: Logger.MetadataProvider?, output: @escaping @Sendable ([UInt8], Logger.Level) -> Void) {
            self.label = label
            self.metadataProvider = metadataProvider
            self.output = output
        }
    }

    private var label: String { fixed.label }
    private var output: @Sendable ([UInt8], Logger.Level) -> Void { fixed.output }

    /// A handler writing to standard error.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.fixed = Fixed(label: label, metadataProvider: metadataProvider) { line, level in
            StandardErrorLog.shared.write(line, level: level)
        }
    }

    /// A handler handing each finished line (with its newline) to `output`.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, output: @escaping @Sendable ([UInt8]) -> Void) {
        self.fixed = Fixed(label: label, metadataProvider: metadataProvider) { line, _ in output(line) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // The pairs of the three sources in one array, later sources winning a shared key: a
        // request's line has about eight, and merging dictionaries (a copy, a hash per key) cost
        // more than sorting them.
        var pairs: [(key: String, value: String)] = []
        pairs.reserveCapacity(metadata.count + (event.metadata?.count ?? 0) + 2)
        appendOwnMetadata(to: &pairs)
        if let explicit = event.metadata { pairs.append(contentsOf: explicit.lazy.map { ($0.key, $0.value.description) }) }
        output(
            Self.line(date: Date(), level: event.level, label: label, message: event.message.description, pairs: Self.ordered(pairs)),
            event.level
        )
    }

    /// Logs `message` with `pairs`, given in key order with each key once and their values
    /// rendered, after this handler's own metadata (a key in both: `pairs`' value): the request
    /// log's line, once per request. `log(event:)` is handed a `Logger.Metadata` dictionary to
    /// build, merge, sort and render; that was most of the request log's 8 % of a
    /// `GET /v1/me/mates`'s server CPU (`perf record`). The two lists are merged as the line is
    /// written. The line is the same.
    func log(level: Logger.Level, message: String, orderedPairs pairs: [(key: String, value: String)]) {
        guard level >= logLevel else { return }
        var own: [(key: String, value: String)] = []
        if !metadata.isEmpty || metadataProvider != nil {
            own.reserveCapacity(metadata.count)
            appendOwnMetadata(to: &own)
            // The handler's metadata is a pair or two (the request id).
            if own.count > 1 { own = Self.ordered(own) }
        }
        var line = Self.lineStart(date: Date(), level: level, label: label, message: message)
        var next = 0
        for index in pairs.indices {
            let key = pairs[index].key.utf8
            while next < own.count, !key.lexicographicallyPrecedes(own[next].key.utf8) {
                // The same key: `pairs`' value, once.
                if !key.elementsEqual(own[next].key.utf8) { Self.appendPair(own[next].key, own[next].value, to: &line) }
                next += 1
            }
            Self.appendPair(pairs[index].key, pairs[index].value, to: &line)
        }
        for index in own.indices[next...] { Self.appendPair(own[index].key, own[index].value, to: &line) }
        line.append(UInt8(ascii: "\n"))
        output(line, level)
    }

    /// The handler's metadata, then the provider's (rendered), in that order.
    private func appendOwnMetadata(to pairs: inout [(key: String, value: String)]) {
        pairs.append(contentsOf: metadata.lazy.map { ($0.key, $0.value.description) })
        if let provided = metadataProvider?.get() { pairs.append(contentsOf: provided.lazy.map { ($0.key, $0.value.description) }) }
    }

    /// One line: time, level, label, message, then `key=value` pairs sorted by key.
    static func line(date: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> [UInt8] {
        line(date: date, level: level, label: label, message: message, pairs: ordered(metadata.map { ($0.key, $0.value.description) }))
    }

    /// `pairs` sorted by key, each key once: of pairs with the same key, the last one.
    ///
    /// The indices are sorted, not the pairs (sorting the pairs copied every key and value at
    /// each move: 2 % of a `GET /v1/me/mates`'s server CPU), by the keys' bytes (for the ASCII
    /// keys of this log, the order of `String`'s `<`); the sort is stable for a key's sources.
    static func ordered(_ pairs: [(key: String, value: String)]) -> [(key: String, value: String)] {
        guard pairs.count > 1 else { return pairs }
        let order = pairs.indices.sorted { a, b in
            let (first, second) = (pairs[a].key.utf8, pairs[b].key.utf8)
            if first.elementsEqual(second) { return a < b }
            return first.lexicographicallyPrecedes(second)
        }
        var result: [(key: String, value: String)] = []
        result.reserveCapacity(order.count)
        // A key is dropped when the next in order is the same key (by bytes, as the sort sees it).
        for (rank, index) in order.enumerated()
        where rank + 1 == order.count || !pairs[order[rank + 1]].key.utf8.elementsEqual(pairs[index].key.utf8) {
            result.append(pairs[index])
        }
        return result
    }

    /// One line from `pairs` already in key order, each key once.
    private static func line(
        date: Date,
        level: Logger.Level,
        label: String,
        message: String,
        pairs: [(key: String, value: String)]
    ) -> [UInt8] {
        var line = lineStart(date: date, level: level, label: label, message: message)
        for index in pairs.indices { appendPair(pairs[index].key, pairs[index].value, to: &line) }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// Time, level, label and message: the start of every line.
    private static func lineStart(date: Date, level: Logger.Level, label: String, message: String) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        Timestamp.appendUTF8(date, to: &line)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: level.rawValue.utf8)
        line.append(UInt8(ascii: " "))
        appendValue(label, to: &line)
        line.append(UInt8(ascii: " "))
        appendValue(message, to: &line)
        return line
    }

    /// ` key=value`.
    private static func appendPair(_ key: String, _ value: String, to line: inout [UInt8]) {
        line.append(UInt8(ascii: " "))
        appendValue(key, to: &line)
        line.append(UInt8(ascii: "="))
        appendValue(value, to: &line)
    }

    /// `text` as is when it is a plain word, else quoted and escaped: a value can never break the
    /// line or forge another pair.
    static func appendValue(_ text: String, to line: inout [UInt8]) {
        let plain =
            !text.isEmpty
            && !text.utf8.contains {
                $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\\")
            }
        if plain { line.append(contentsOf: text.utf8) } else { appendQuoted(text, to: &line) }
    }
}
