import Domain
import EventLog
import Foundation

extension RecordedEvent {
    /// The schema version the event was written with (from its metadata; 1 when absent).
    public var schemaVersion: Int {
        guard let object = try? JSONSerialization.jsonObject(with: metadata) as? [String: Any] else { return 1 }
        return object["schema_version"] as? Int ?? 1
    }

    /// The domain event, upcast to the current schema version.
    public func domainEvent() throws -> Event {
        try Event.decode(typeName: type, schemaVersion: schemaVersion, data: data)
    }
}
