import Domain
import EventLog
import Foundation
import PersonalData
import Postgres

/// `sniffmeet replay --fold STREAM [--at POSITION]`: a stream's state as of a feed position,
/// folded by the domain's own `evolve` from the stored events.
public enum StreamFold {
    public struct Result: Sendable {
        public var stream: String
        /// Events folded (the stream's version at that point).
        public var version: Int64
        /// The feed position of the last event folded.
        public var position: LogPosition?
        public var state: StreamState
    }

    /// Blocking. The events of a deleted user fold as `Event.erased` (their content is gone).
    public static func run(stream: String, at: LogPosition?, sealer: EventSealer, on connection: Connection) throws -> Result {
        guard let name = StreamName(rawValue: stream) else {
            throw ProjectionError.invalidArgument("\(stream) is not a stream name (user-…, nickname-…, mates-…-…, walk-…)")
        }
        let records = try EventLog.readStream(on: connection, stream).filter { at == nil || $0.position <= at! }
        let events = try sealer.events(from: records.filter { Event.typeNames.contains($0.type) }, on: connection)
        return Result(
            stream: stream,
            version: records.last?.version ?? 0,
            position: records.last?.position,
            state: SniffMeet.fold(name, events)
        )
    }
}
