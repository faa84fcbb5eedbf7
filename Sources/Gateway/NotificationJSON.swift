import Domain
import EventLog
import Foundation

/// An inbox entry as API.md shows it. Mate categories carry `request_id`; walk categories carry
/// `walk_id`, `message`, `latitude`, `longitude` and `place_name`.
public struct NotificationJSON: JSONObjectWritable, Sendable {
    public var notificationID: UUID
    public var category: String
    public var fromUser: UUID
    public var fromDogName: String
    public var requestID: UUID?
    public var walkID: UUID?
    public var message: String?
    public var latitude: Double?
    public var longitude: Double?
    public var placeName: String?
    public var createdAt: Date
    /// The feed position of the event behind it (the SSE id); not part of the JSON.
    public var position: LogPosition

    public func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("notification_id", notificationID)
        object.string("category", category)
        object.object("from") { from in
            from.id("user_id", fromUser)
            from.string("dog_name", fromDogName)
        }
        if category.hasPrefix("walk_") {
            object.id("walk_id", walkID)
            object.string("message", message)
            try object.number("latitude", latitude)
            try object.number("longitude", longitude)
            object.string("place_name", placeName)
        } else {
            object.id("request_id", requestID)
        }
        object.timestamp("created_at", createdAt)
    }
}
