import Domain
import Foundation
import JSONText
import Projections

/// One inbox entry on its way to one device: what the outbox row, the `notifications` row and
/// the session give when it is sent.
public struct OutgoingPush: Sendable {
    public var pushID: UUID
    public var sessionID: UUID
    public var deviceToken: String
    /// `ko` or `en`.
    public var locale: String
    /// The inbox entry, as `GET /v1/me/notifications` shows it.
    public var entry: NotificationRow
    /// When APNs may stop trying (a walk request's deadline), if set.
    public var expiresAt: Date?
    /// When the entry's event was decided (latency is measured from it).
    public var entryAt: Date
    public var attempts: Int

    /// The entry's id: the push's `apns-collapse-id`.
    public var notificationID: UUID { entry.notificationID }
}

/// The APNs payload of a push (API.md "Push notifications"): `aps.alert` with a title and body in
/// the device's language naming the other dog (and, for walks, the message and place),
/// `aps.sound` `default`, and the inbox entry itself under `notification`. At most 4 KiB:
/// a longer one has its texts shortened rather than being refused by APNs.
enum PushPayload {
    static let limit = 4096

    struct Alert {
        var title: String
        var body: String
    }

    /// The payload's bytes, at most `limit`. Written by hand, as the API's answers are: through
    /// `JSONEncoder` it was a fifth of the delivery loop's CPU in `bench push`.
    static func data(for push: OutgoingPush) -> [UInt8] {
        var entry = push.entry
        let english = push.locale == "en"
        var alert = alert(
            category: entry.category,
            dog: entry.fromDogName,
            message: entry.message,
            place: entry.placeName,
            english: english
        )
        while true {
            var writer = JSONObjectWriter(capacity: 1024)
            // Only non-finite numbers throw, and coordinates come from validated walks.
            let written: ()? = try? writer.writeObject { body in
                body.object("aps") { aps in
                    aps.object("alert") { text in
                        text.string("title", alert.title)
                        text.string("body", alert.body)
                    }
                    aps.string("sound", "default")
                    // Notification Center groups a conversation's messages.
                    if entry.category == "chat_message" { aps.id("thread-id", entry.fromUser) }
                }
                try body.object("notification", entry)
            }
            guard written != nil else { return Array(#"{"aps":{"alert":"SniffMeet"}}"#.utf8) }
            if writer.bytes.count <= limit { return writer.bytes }
            // Too long: halve the free texts (whole characters) until it fits.
            entry.message = entry.message.map { String($0.prefix($0.count / 2)) }
            entry.placeName = entry.placeName.map { String($0.prefix($0.count / 2)) }
            entry.fromDogName = String(entry.fromDogName.prefix(max(entry.fromDogName.count / 2, 1)))
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
        // A chat message: the dog's name, and the text (or "📷" for a photo).
        case ("chat_message", _): return Alert(title: dog, body: message ?? "📷")
        case (_, true): return Alert(title: "SniffMeet", body: "News from \(dog).")
        case (_, false): return Alert(title: "SniffMeet", body: "\(dog)의 새 소식이 있어요.")
        }
    }
}
