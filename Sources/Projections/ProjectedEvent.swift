import Domain
import EventLog
import Foundation

/// An event of the log decoded into the domain's `Event`, with what projectors need of its
/// record: feed position, event id (notification ids) and stream.
public struct ProjectedEvent: Sendable {
    public var position: LogPosition
    public var id: UUID
    public var stream: String
    public var event: Event

    public init(position: LogPosition, id: UUID, stream: String, event: Event) {
        self.position = position
        self.id = id
        self.stream = stream
        self.event = event
    }

    /// Decodes a page of the feed. Types this code does not know are left out (no read model
    /// can use them; the caller's checkpoint still moves past them). A known type that fails
    /// to decode is an error: skipping it would silently lose a row.
    public static func decode(_ records: [RecordedEvent]) throws -> [ProjectedEvent] {
        var decoded: [ProjectedEvent] = []
        decoded.reserveCapacity(records.count)
        for record in records {
            guard Event.typeNames.contains(record.type) else { continue }
            let event = try Event.decode(typeName: record.type, schemaVersion: record.schemaVersion, data: record.data)
            decoded.append(ProjectedEvent(position: record.position, id: record.id, stream: record.stream, event: event))
        }
        return decoded
    }
}
