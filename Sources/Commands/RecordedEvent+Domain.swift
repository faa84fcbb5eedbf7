import Domain
import EventLog
import Foundation

extension RecordedEvent {
    /// The domain event, upcast to the current schema version.
    public func domainEvent() throws -> Event {
        try Event.decode(typeName: type, schemaVersion: schemaVersion, data: data)
    }
}
