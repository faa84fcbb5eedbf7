import Domain
import Foundation

/// One inbox entry on its way to one device: what the outbox row, the `notifications` row and
/// the session give when it is sent.
public struct OutgoingPush: Sendable {
    public var pushID: UUID
    public var notificationID: UUID
    public var sessionID: UUID
    public var deviceToken: String
    /// `ko` or `en`.
    public var locale: String
    public var category: String
    public var fromUser: UUID
    public var fromDogName: String?
    public var requestID: UUID?
    public var walkID: UUID?
    public var message: String?
    public var latitude: Double?
    public var longitude: Double?
    public var placeName: String?
    public var createdAt: Date
    /// When APNs may stop trying (a walk request's deadline), if set.
    public var expiresAt: Date?
    /// When the entry's event was decided (latency is measured from it).
    public var entryAt: Date
    public var attempts: Int
}

/// The APNs payload of a push (API.md "Push notifications"): `aps.alert` with a title and body in
/// the device's language naming the other dog (and, for walks, the message and place),
/// `aps.sound` `default`, and the inbox entry itself under `notification`. At most 4 KiB:
/// a longer one has its texts shortened rather than being refused by APNs.
enum PushPayload {
    static let limit = 4096

    struct Alert: Encodable {
        var title: String
        var body: String
    }

    struct APS: Encodable {
        var alert: Alert
        var sound = "default"
    }

    struct From: Encodable {
        var userID: String
        var dogName: String
        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case dogName = "dog_name"
        }
    }

    /// The entry as `GET /v1/me/notifications` shows it.
    struct Entry: Encodable {
        var notificationID: String
        var category: String
        var from: From
        var requestID: String?
        var walkID: String?
        var message: String?
        var latitude: Double?
        var longitude: Double?
        var placeName: String?
        var createdAt: String

        enum CodingKeys: String, CodingKey {
            case notificationID = "notification_id"
            case requestID = "request_id"
            case walkID = "walk_id"
            case placeName = "place_name"
            case createdAt = "created_at"
            case category, from, message, latitude, longitude
        }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(notificationID, forKey: .notificationID)
            try c.encode(category, forKey: .category)
            try c.encode(from, forKey: .from)
            try c.encodeIfPresent(requestID, forKey: .requestID)
            try c.encodeIfPresent(walkID, forKey: .walkID)
            if category == "walk_requested" {
                try c.encode(message, forKey: .message)
                try c.encode(latitude, forKey: .latitude)
                try c.encode(longitude, forKey: .longitude)
                try c.encode(placeName, forKey: .placeName)
            }
            try c.encode(createdAt, forKey: .createdAt)
        }
    }

    struct Body: Encodable {
        var aps: APS
        var notification: Entry
    }

    /// The payload's bytes, at most `limit`.
    static func data(for push: OutgoingPush) -> Data {
        let dog = push.fromDogName ?? (push.locale == "en" ? "A dog" : "누군가")
        var message = push.message
        var place = push.placeName
        var alert = alert(category: push.category, dog: dog, message: message, place: place, english: push.locale == "en")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        while true {
            let body = Body(
                aps: APS(alert: alert),
                notification: Entry(
                    notificationID: push.notificationID.uuidString.lowercased(),
                    category: push.category,
                    from: From(userID: push.fromUser.uuidString.lowercased(), dogName: dog),
                    requestID: push.requestID?.uuidString.lowercased(),
                    walkID: push.walkID?.uuidString.lowercased(),
                    message: message,
                    latitude: push.latitude,
                    longitude: push.longitude,
                    placeName: place,
                    createdAt: Timestamp.string(from: push.createdAt)
                )
            )
            // Only non-finite numbers fail, and coordinates come from validated walks.
            let data = (try? encoder.encode(body)) ?? Data(#"{"aps":{"alert":"SniffMeet"}}"#.utf8)
            if data.count <= limit { return data }
            // Too long: halve the free texts (whole characters) until it fits.
            message = message.map { String($0.prefix($0.count / 2)) }
            place = place.map { String($0.prefix($0.count / 2)) }
            alert.body = String(alert.body.prefix(alert.body.count / 2))
            alert.title = String(alert.title.prefix(max(alert.title.count / 2, 1)))
        }
    }

    /// Title and body in Korean (the app's first language) or English.
    static func alert(category: String, dog: String, message: String?, place: String?, english: Bool) -> Alert {
        let walkLine = [message, place].compactMap { $0 }.joined(separator: " · ")
        switch (category, english) {
        case ("mate_requested", true): return Alert(title: "New mate request", body: "\(dog) wants to be your walking mate.")
        case ("mate_requested", false): return Alert(title: "새 메이트 요청", body: "\(dog)의 산책 메이트 요청이 왔어요.")
        case ("mate_accepted", true): return Alert(title: "You are mates!", body: "\(dog) accepted your mate request.")
        case ("mate_accepted", false): return Alert(title: "메이트가 되었어요!", body: "\(dog)이(가) 메이트 요청을 수락했어요.")
        case ("walk_requested", true): return Alert(title: "Walk with \(dog)?", body: walkLine)
        case ("walk_requested", false): return Alert(title: "\(dog)의 산책 요청", body: walkLine)
        case ("walk_accepted", true): return Alert(title: "Walk accepted", body: "\(dog) is coming for the walk.")
        case ("walk_accepted", false): return Alert(title: "산책 수락", body: "\(dog)이(가) 산책 요청을 수락했어요.")
        case ("walk_declined", true): return Alert(title: "Walk declined", body: "\(dog) can't make it this time.")
        case ("walk_declined", false): return Alert(title: "산책 거절", body: "\(dog)은(는) 이번에는 함께할 수 없어요.")
        case ("walk_expired", true): return Alert(title: "Walk request expired", body: "\(dog) did not answer in time.")
        case ("walk_expired", false): return Alert(title: "산책 요청 만료", body: "\(dog)의 응답 시간이 지났어요.")
        case (_, true): return Alert(title: "SniffMeet", body: "News from \(dog).")
        case (_, false): return Alert(title: "SniffMeet", body: "\(dog)의 새 소식이 있어요.")
        }
    }
}
