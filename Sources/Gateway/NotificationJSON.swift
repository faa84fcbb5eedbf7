import Domain
import EventLog
import Foundation

/// An inbox entry as API.md shows it. Mate categories carry `request_id`; walk categories carry
/// `walk_id`, `message`, `latitude`, `longitude` and `place_name`.
public struct NotificationJSON: Encodable, Sendable {
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

    enum CodingKeys: String, CodingKey {
        case notificationID = "notification_id", category, from, requestID = "request_id", walkID = "walk_id"
        case message, latitude, longitude, placeName = "place_name", createdAt = "created_at"
    }
    enum FromKeys: String, CodingKey { case userID = "user_id", dogName = "dog_name" }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(notificationID.uuidString.lowercased(), forKey: .notificationID)
        try c.encode(category, forKey: .category)
        var from = c.nestedContainer(keyedBy: FromKeys.self, forKey: .from)
        try from.encode(fromUser.uuidString.lowercased(), forKey: .userID)
        try from.encode(fromDogName, forKey: .dogName)
        if category.hasPrefix("walk_") {
            try c.encode(walkID?.uuidString.lowercased(), forKey: .walkID)
            try c.encode(message, forKey: .message)
            try c.encode(latitude, forKey: .latitude)
            try c.encode(longitude, forKey: .longitude)
            try c.encode(placeName, forKey: .placeName)
        } else {
            try c.encode(requestID?.uuidString.lowercased(), forKey: .requestID)
        }
        try c.encode(Timestamp.string(from: createdAt), forKey: .createdAt)
    }
}
