import Domain
import EventLog
import Foundation
import PersonalData
import Postgres

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

    /// Decodes a page of the feed, opening sealed personal parts with keys read on
    /// `connection`. Types this code does not know are left out (no read model can use them;
    /// the caller's checkpoint still moves past them). A known type that fails to decode is an
    /// error: skipping it would silently lose a row.
    ///
    /// Deleted accounts: an event that names a user erased by now is left out too, except that
    /// user's `user_deleted`, which removes every row naming them. So a read model never shows a
    /// deleted user, whether it projects their events before or after the deletion (a rebuild
    /// skips them all; the live runner wrote rows that `user_deleted` then removes).
    public static func decode(_ records: [RecordedEvent], sealer: EventSealer, on connection: Connection) throws -> [ProjectedEvent] {
        let known = records.filter { Event.typeNames.contains($0.type) }
        let events = try sealer.events(from: known, on: connection)
        var decoded: [ProjectedEvent] = []
        decoded.reserveCapacity(known.count)
        var named: Set<UUID> = []
        for (record, event) in zip(known, events) {
            if case .erased = event { continue }
            named.formUnion(event.namedUsers)
            decoded.append(ProjectedEvent(position: record.position, id: record.id, stream: record.stream, event: event))
        }
        let erased = named.isEmpty ? [] : try sealer.keys.erasedUsers(among: named, on: connection)
        guard !erased.isEmpty else { return decoded }
        return decoded.filter { projected in
            if case .userDeleted = projected.event { return true }
            return projected.event.namedUsers.allSatisfy { !erased.contains($0) }
        }
    }
}
