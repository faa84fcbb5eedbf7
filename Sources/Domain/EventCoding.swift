import Foundation
import UUIDText

/// Why stored event JSON could not be turned into an `Event`.
public enum EventDecodingError: Error, Equatable, Sendable {
    /// The type name is not one this code knows.
    case unknownType(String)
    /// The schema version is newer than this code, or older with no upcaster to bridge it.
    case unsupportedSchemaVersion(typeName: String, version: Int)
    /// The JSON does not match the type's schema.
    case malformed(typeName: String, reason: String)
}

extension Event {
    private static func encoder(_ part: EventPart) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.string(from: date))
        }
        encoder.userInfo[EventPart.userInfoKey] = part
        return encoder
    }

    /// One encoder per part; their options never change.
    private static let encoders: [EventPart: JSONEncoder] = [
        .whole: encoder(.whole), .clear: encoder(.clear), .personal: encoder(.personal),
    ]

    /// The event's JSON (or one `part` of it, see `EventPart`): sorted keys, snake_case,
    /// lowercase UUIDs, RFC 3339 UTC dates with milliseconds. The same event always gives the
    /// same bytes. The log's `data` column holds the clear part and the sealed personal part.
    public func encodedData(_ part: EventPart = .whole) -> Data {
        // An event without personal fields is all clear.
        if personalDataOwner == nil, part != .whole { return part == .personal ? Data("{}".utf8) : encodedData() }
        let encoder = Self.encoders[part]!
        do {
            switch self {
            case .userRegistered(let p): return try p.handwrittenJSON(part) ?? encoder.encode(p)
            case .profileUpdated(let p): return try p.handwrittenJSON(part) ?? encoder.encode(p)
            case .deviceTokenSet(let p): return try encoder.encode(p)
            case .notificationDismissed(let p): return try encoder.encode(p)
            case .userDeleted(let p): return try encoder.encode(p)
            case .notificationsCleared(let p): return try encoder.encode(p)
            case .userUnsuspended(let p): return try encoder.encode(p)
            case .userReported(let p): return try encoder.encode(p)
            case .reportResolved(let p): return try encoder.encode(p)
            case .userSuspended(let p): return try encoder.encode(p)
            case .userBlocked(let p), .userUnblocked(let p): return try encoder.encode(p)
            case .nicknameReserved(let p), .nicknameReleased(let p): return try p.handwrittenJSON(part) ?? encoder.encode(p)
            case .mateRequested(let p), .mateDeclined(let p), .mateRequestCancelled(let p): return p.handwrittenJSON()
            case .mateAccepted(let p): return p.handwrittenJSON()
            case .matesUnpaired(let p): return try encoder.encode(p)
            case .walkRequested(let p): return try p.handwrittenJSON(part) ?? encoder.encode(p)
            case .walkAccepted(let p), .walkDeclined(let p), .walkCancelled(let p), .walkExpired(let p):
                return p.handwrittenJSON()
            case .walkLogged(let p): return try encoder.encode(p)
            case .walkLogVisibilityChanged(let p): return try encoder.encode(p)
            case .walkLogDeleted(let p): return try encoder.encode(p)
            case .messageSent(let p): return try p.handwrittenJSON(part) ?? encoder.encode(p)
            case .messageEdited(let p): return try encoder.encode(p)
            case .messageUnsent(let p): return try encoder.encode(p)
            case .erased(let e): preconditionFailure("an erased \(e.typeName) event is never written")
            }
        } catch {
            // Only non-finite doubles can fail, and decide() never lets them into an event.
            preconditionFailure("event \(typeName) could not be encoded: \(error)")
        }
    }

    /// One decoder for every event read (projectors read thousands a second); its options never change.
    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = Timestamp.date(from: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 UTC time: \(text)")
            }
            return date
        }
        return decoder
    }()

    /// Reads an event back from the log. JSON written under an older `schemaVersion` is first
    /// brought up to the current version by `EventUpcasting`.
    public static func decode(typeName: String, schemaVersion: Int, data: Data) throws -> Event {
        guard typeNames.contains(typeName) else { throw EventDecodingError.unknownType(typeName) }
        let current = try EventUpcasting.upcast(typeName: typeName, from: schemaVersion, data: data)
        let decoder = Self.decoder
        func payload<P: Decodable>(_: P.Type) throws -> P {
            do { return try decoder.decode(P.self, from: current) } catch {
                throw EventDecodingError.malformed(typeName: typeName, reason: "\(error)")
            }
        }
        switch typeName {
        case "user_registered": return .userRegistered(try payload(UserRegistered.self))
        case "profile_updated": return .profileUpdated(try payload(ProfileUpdated.self))
        case "device_token_set": return .deviceTokenSet(try payload(DeviceTokenSet.self))
        case "nickname_reserved": return .nicknameReserved(try payload(NicknameClaim.self))
        case "nickname_released": return .nicknameReleased(try payload(NicknameClaim.self))
        case "mate_requested": return .mateRequested(try payload(MateRequestUpdate.self))
        case "mate_accepted": return .mateAccepted(try payload(MateAccepted.self))
        case "mate_declined": return .mateDeclined(try payload(MateRequestUpdate.self))
        case "mate_request_cancelled": return .mateRequestCancelled(try payload(MateRequestUpdate.self))
        case "mates_unpaired": return .matesUnpaired(try payload(MatesUnpaired.self))
        case "walk_requested": return .walkRequested(try payload(WalkRequested.self))
        case "walk_accepted": return .walkAccepted(try payload(WalkUpdate.self))
        case "walk_declined": return .walkDeclined(try payload(WalkUpdate.self))
        case "walk_cancelled": return .walkCancelled(try payload(WalkUpdate.self))
        case "walk_expired": return .walkExpired(try payload(WalkUpdate.self))
        case "notification_dismissed": return .notificationDismissed(try payload(NotificationDismissed.self))
        case "user_deleted": return .userDeleted(try payload(UserDeleted.self))
        case "notifications_cleared": return .notificationsCleared(try payload(UserMoment.self))
        case "user_reported": return .userReported(try payload(UserReported.self))
        case "report_resolved": return .reportResolved(try payload(ReportResolved.self))
        case "user_suspended": return .userSuspended(try payload(UserSuspended.self))
        case "user_unsuspended": return .userUnsuspended(try payload(UserUnsuspended.self))
        case "user_blocked": return .userBlocked(try payload(BlockUpdate.self))
        case "user_unblocked": return .userUnblocked(try payload(BlockUpdate.self))
        case "walk_logged": return .walkLogged(try payload(WalkLogged.self))
        case "walk_log_visibility_changed": return .walkLogVisibilityChanged(try payload(WalkLogVisibilityChanged.self))
        case "walk_log_deleted": return .walkLogDeleted(try payload(WalkLogDeleted.self))
        case "message_sent": return .messageSent(try payload(MessageSent.self))
        case "message_edited": return .messageEdited(try payload(MessageEdited.self))
        case "message_unsent": return .messageUnsent(try payload(MessageUnsent.self))
        default: throw EventDecodingError.unknownType(typeName)
        }
    }
}

extension WalkRequested {
    /// The event every SendWalk appends, written by `EventJSONWriter`; nil when a value needs
    /// `JSONEncoder` (see there).
    func handwrittenJSON(_ part: EventPart = .whole) -> Data? {
        var json = EventJSONWriter(part, capacity: 256 + message.utf8.count + (placeName?.utf8.count ?? 0))
        json.date(#""created_at":"#, createdAt)
        json.date(#""expires_at":"#, expiresAt)
        json.uuid(#""from":"#, from)
        guard json.number(#""latitude":"#, latitude, personal: true), json.number(#""longitude":"#, longitude, personal: true),
            json.text(#""message":"#, message, personal: true), json.text(#""place_name":"#, placeName, personal: true)
        else { return nil }
        json.uuid(#""to":"#, to)
        json.uuid(#""walk_id":"#, walkID)
        return json.data()
    }
}

extension MessageSent {
    /// The event every chat send appends, written by `EventJSONWriter`; nil when its text
    /// needs `JSONEncoder`.
    func handwrittenJSON(_ part: EventPart = .whole) -> Data? {
        var json = EventJSONWriter(part, capacity: 256 + (text?.utf8.count ?? 0))
        json.uuid(#""from":"#, from)
        json.uuid(#""message_id":"#, messageID)
        json.uuid(#""photo_id":"#, photoID, personal: true)
        json.date(#""sent_at":"#, sentAt)
        json.int(#""seq":"#, seq)
        guard json.text(#""text":"#, text, personal: true) else { return nil }
        json.uuid(#""to":"#, to)
        return json.data()
    }
}

extension MateRequestUpdate {
    /// RequestMate's, DeclineMate's and CancelMateRequest's event, written by `EventJSONWriter`.
    func handwrittenJSON() -> Data {
        var json = EventJSONWriter(.whole)
        json.date(#""at":"#, at)
        json.uuid(#""from":"#, from)
        json.uuid(#""request_id":"#, requestID)
        json.uuid(#""to":"#, to)
        return json.data()
    }
}

extension MateAccepted {
    /// AcceptMate's event, written by `EventJSONWriter`.
    func handwrittenJSON() -> Data {
        var json = EventJSONWriter(.whole)
        json.date(#""at":"#, at)
        json.uuid(#""from":"#, from)
        json.bool(#""mutual":"#, mutual)
        json.uuid(#""request_id":"#, requestID)
        json.uuid(#""to":"#, to)
        return json.data()
    }
}

extension WalkUpdate {
    /// RespondWalk's (and the expiry's, a cancel's) event, written by `EventJSONWriter`.
    func handwrittenJSON() -> Data {
        var json = EventJSONWriter(.whole)
        json.date(#""at":"#, at)
        json.uuid(#""from":"#, from)
        json.uuid(#""to":"#, to)
        json.uuid(#""walk_id":"#, walkID)
        return json.data()
    }
}

extension NicknameClaim {
    /// The nickname stream's event of every sign-up, written by `EventJSONWriter`; nil when the
    /// nickname needs `JSONEncoder`.
    func handwrittenJSON(_ part: EventPart = .whole) -> Data? {
        var json = EventJSONWriter(part)
        json.date(#""at":"#, at)
        guard json.text(#""nickname":"#, nickname, personal: true) else { return nil }
        json.uuid(#""user_id":"#, userID)
        return json.data()
    }
}

extension DogProfile {
    /// The profile as a nested object, written by `EventJSONWriter`; nil when a text needs
    /// `JSONEncoder`.
    func handwrittenJSON() -> [UInt8]? {
        var json = EventJSONWriter(.whole)
        json.int(#""age":"#, age)
        guard json.text(#""dog_name":"#, dogName) else { return nil }
        json.names(#""keywords":"#, keywords.map(\.rawValue))
        json.bool(#""neutered":"#, neutered)
        guard json.text(#""nickname":"#, nickname), json.text(#""profile_image":"#, profileImage) else { return nil }
        json.name(#""sex":"#, sex.rawValue)
        json.name(#""size":"#, size.rawValue)
        return json.closed()
    }
}

extension DogProfile {
    /// A profile event's JSON: the profile (personal), its time under `timeKey`, the user.
    fileprivate func eventJSON(_ part: EventPart, timeKey: StaticString, time: Date, userID: UUID) -> Data? {
        var json = EventJSONWriter(part)
        if part.writesPersonal {
            guard let profile = handwrittenJSON() else { return nil }
            json.object(#""profile":"#, profile, personal: true)
        }
        json.date(timeKey, time)
        json.uuid(#""user_id":"#, userID)
        return json.data()
    }
}

extension UserRegistered {
    /// Every sign-up's event, written by `EventJSONWriter`; nil when the profile needs `JSONEncoder`.
    func handwrittenJSON(_ part: EventPart = .whole) -> Data? {
        profile.eventJSON(part, timeKey: #""registered_at":"#, time: registeredAt, userID: userID)
    }
}

extension ProfileUpdated {
    /// A profile change's event, written by `EventJSONWriter`; nil when the profile needs `JSONEncoder`.
    func handwrittenJSON(_ part: EventPart = .whole) -> Data? {
        profile.eventJSON(part, timeKey: #""updated_at":"#, time: updatedAt, userID: userID)
    }
}
