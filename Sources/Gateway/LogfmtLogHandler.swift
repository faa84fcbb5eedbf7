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
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let output: @Sendable ([UInt8], Logger.Level) -> Void

    /// A handler writing to standard error.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.output = { line, level in StandardErrorLog.shared.write(line, level: level) }
    }

    /// A handler handing each finished line (with its newline) to `output`.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, output: @escaping @Sendable ([UInt8]) -> Void) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.output = { line, _ in output(line) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // The pairs of the three sources in one array, later sources winning a shared key: a
        // request's line has about eight, and merging dictionaries (a copy, a hash per key) cost
        // more than sorting them.
        var pairs: [(key: String, value: Logger.Metadata.Value)] = []
        pairs.reserveCapacity(metadata.count + (event.metadata?.count ?? 0) + 2)
        pairs.append(contentsOf: metadata.lazy.map { ($0.key, $0.value) })
        if let provided = metadataProvider?.get() { pairs.append(contentsOf: provided.lazy.map { ($0.key, $0.value) }) }
        if let explicit = event.metadata { pairs.append(contentsOf: explicit.lazy.map { ($0.key, $0.value) }) }
        output(Self.line(date: Date(), level: event.level, label: label, message: event.message.description, pairs: pairs), event.level)
    }

    /// One line: time, level, label, message, then `key=value` pairs sorted by key.
    static func line(date: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> [UInt8] {
        line(date: date, level: level, label: label, message: message, pairs: metadata.map { ($0.key, $0.value) })
    }

    /// `line(…metadata:)` from pairs in which a key may repeat: the last one counts.
    private static func line(
        date: Date,
        level: Logger.Level,
        label: String,
        message: String,
        pairs unsorted: [(key: String, value: Logger.Metadata.Value)]
    ) -> [UInt8] {
        // Stable order of keys, and of the sources for one key: the last of a run wins. The
        // indices are sorted, not the pairs (sorting the pairs copied every key and value at each
        // move: 2 % of a `GET /v1/me/mates`'s server CPU), by the keys' bytes (for the ASCII keys
        // of this log, the order of `String`'s `<`).
        let order = unsorted.indices.sorted { a, b in
            let (first, second) = (unsorted[a].key.utf8, unsorted[b].key.utf8)
            if first.elementsEqual(second) { return a < b }
            return first.lexicographicallyPrecedes(second)
        }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        Timestamp.appendUTF8(date, to: &line)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: level.rawValue.utf8)
        line.append(UInt8(ascii: " "))
        appendValue(label, to: &line)
        line.append(UInt8(ascii: " "))
        appendValue(message, to: &line)
        // A key is dropped when the next in order is the same key (by bytes, as the sort sees it).
        for (rank, index) in order.enumerated()
        where rank + 1 == order.count || !unsorted[order[rank + 1]].key.utf8.elementsEqual(unsorted[index].key.utf8) {
            line.append(UInt8(ascii: " "))
            appendValue(unsorted[index].key, to: &line)
            line.append(UInt8(ascii: "="))
            appendValue(unsorted[index].value.description, to: &line)
        }
        line.append(UInt8(ascii: "\n"))
        return line
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
