import Foundation
import Postgres

/// How far a stream must be for an append to go ahead.
public enum ExpectedVersion: Sendable, Hashable {
    /// Whatever the stream holds.
    case any
    /// The stream must not exist yet.
    case noStream
    /// The stream's last event has exactly this version.
    case exactly(Int64)

    /// The version to check, nil for `.any`.
    var parameter: Int64? {
        switch self {
        case .any: return nil
        case .noStream: return 0
        case .exactly(let version): return version
        }
    }

    /// The expectation that matches a stream read at `version` (0 = empty).
    public static func version(_ version: Int64) -> ExpectedVersion { version == 0 ? .noStream : .exactly(version) }
}

/// An event about to be appended.
public struct NewEvent: Sendable, Hashable {
    public var stream: String
    public var id: UUID
    public var type: String
    /// JSON object.
    public var data: Data
    /// JSON object: command id, correlation id, causation id, actor, schema version.
    public var metadata: Data

    public init(stream: String, id: UUID? = nil, type: String, data: Data, metadata: Data = Data("{}".utf8)) {
        self.stream = stream
        self.id = id ?? .random()
        self.type = type
        self.data = data
        self.metadata = metadata
    }
}

/// An event as stored in the log.
public struct RecordedEvent: Sendable, Hashable {
    public var position: LogPosition
    public var stream: String
    public var version: Int64
    public var id: UUID
    public var type: String
    public var data: Data
    public var metadata: Data
    public var recordedAt: Date
}

/// What an append did.
public struct AppendResult: Sendable, Hashable {
    /// The feed positions of the appended events, in order.
    public var positions: [LogPosition]
    /// The ids the events were stored under (derived from the command id when there is one).
    public var eventIDs: [UUID]
    /// True when the command id had appended before: nothing was written this time and the
    /// first append's positions are returned.
    public var replayed: Bool

    /// The position of the last event, what `Log-Position` reports.
    public var last: LogPosition { positions.last ?? .start }
}

/// Errors of the log.
public enum EventLogError: Error, Sendable, CustomStringConvertible {
    /// Another writer changed `stream` after it was read; reload and decide again.
    case versionConflict(stream: String, message: String)
    /// The database refused an UPDATE/DELETE/TRUNCATE on the log.
    case appendOnly(message: String)
    /// This command id's events are already in the log (inside a caller's transaction, which is
    /// now aborted; `EventLog.append` answers with the first run's positions instead).
    case alreadyAppended
    /// The append itself was malformed.
    case invalidAppend(String)

    public var description: String {
        switch self {
        case .versionConflict(_, let message): return message
        case .appendOnly(let message): return message
        case .alreadyAppended: return "this command's events are already in the log"
        case .invalidAppend(let message): return message
        }
    }
}

extension RecordedEvent {
    /// The schema version the event was written with: its metadata's `schema_version`, 1 when
    /// absent (what decoders pass to the domain's upcasting).
    public var schemaVersion: Int { Self.schemaVersion(in: metadata) }

    /// The `schema_version` of the metadata JSON; 1 when absent (events written before it was recorded).
    public static func schemaVersion(in metadata: Data) -> Int {
        // The usual form, `"schema_version":N` as jsonb prints it, is read without a JSON parse
        // (a rebuild reads every event's metadata); anything else takes the general path.
        if let fast = fastSchemaVersion(metadata) { return fast }
        guard metadata.range(of: Data("schema_version".utf8)) != nil,
            let object = try? JSONSerialization.jsonObject(with: metadata) as? [String: Any]
        else { return 1 }
        if let number = object["schema_version"] as? Int { return number }
        if let text = object["schema_version"] as? String, let number = Int(text) { return number }
        return 1
    }

    private static let schemaKey = Array("\"schema_version\":".utf8)

    /// `"schema_version": 12` (optional space) → 12; nil when absent or not a plain integer.
    static func fastSchemaVersion(_ metadata: Data) -> Int? {
        metadata.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
            let key = schemaKey
            guard bytes.count > key.count else { return nil }
            var index = 0
            outer: while index + key.count <= bytes.count {
                for offset in 0..<key.count where bytes[index + offset] != key[offset] {
                    index += 1
                    continue outer
                }
                var cursor = index + key.count
                while cursor < bytes.count, bytes[cursor] == UInt8(ascii: " ") { cursor += 1 }
                var value = 0
                var digits = 0
                while cursor < bytes.count, bytes[cursor] >= UInt8(ascii: "0"), bytes[cursor] <= UInt8(ascii: "9"), digits < 9 {
                    value = value * 10 + Int(bytes[cursor] - UInt8(ascii: "0"))
                    cursor += 1
                    digits += 1
                }
                guard digits > 0, cursor < bytes.count, bytes[cursor] == UInt8(ascii: ",") || bytes[cursor] == UInt8(ascii: "}") else {
                    return nil
                }
                return value
            }
            return nil
        }
    }
}
