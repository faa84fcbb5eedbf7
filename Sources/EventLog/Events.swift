import Foundation

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

    public init(stream: String, id: UUID = UUID(), type: String, data: Data, metadata: Data = Data("{}".utf8)) {
        self.stream = stream
        self.id = id
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
