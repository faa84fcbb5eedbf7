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
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        output(Self.line(date: Date(), level: event.level, label: label, message: event.message.description, metadata: merged), event.level)
    }

    /// One line: time, level, label, message, then `key=value` pairs sorted by key.
    static func line(date: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        Timestamp.appendUTF8(date, to: &line)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: level.rawValue.utf8)
        line.append(UInt8(ascii: " "))
        appendValue(label, to: &line)
        line.append(UInt8(ascii: " "))
        appendValue(message, to: &line)
        for key in metadata.keys.sorted() {
            line.append(UInt8(ascii: " "))
            appendValue(key, to: &line)
            line.append(UInt8(ascii: "="))
            appendValue(metadata[key]!.description, to: &line)
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
