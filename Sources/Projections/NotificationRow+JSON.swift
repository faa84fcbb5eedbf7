import Foundation
import JSONText

/// An inbox entry as API.md shows it: the read model's row, written as JSON. Mate categories
/// carry `request_id`; walk categories carry `walk_id`, `message`, `latitude`, `longitude` and
/// `place_name`. The row's `position` (the SSE id) is not part of the JSON. The API's answers
/// and the push payload's `notification` are both written here.

extension NotificationRow: JSONObjectWritable {
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
