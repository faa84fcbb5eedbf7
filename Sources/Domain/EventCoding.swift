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
            case .userRegistered(let p): return try encoder.encode(p)
            case .profileUpdated(let p): return try encoder.encode(p)
            case .deviceTokenSet(let p): return try encoder.encode(p)
            case .notificationDismissed(let p): return try encoder.encode(p)
            case .userDeleted(let p): return try encoder.encode(p)
            case .notificationsCleared(let p): return try encoder.encode(p)
            case .userUnsuspended(let p): return try encoder.encode(p)
            case .userReported(let p): return try encoder.encode(p)
            case .reportResolved(let p): return try encoder.encode(p)
            case .userSuspended(let p): return try encoder.encode(p)
            case .userBlocked(let p), .userUnblocked(let p): return try encoder.encode(p)
            case .nicknameReserved(let p), .nicknameReleased(let p): return try encoder.encode(p)
            case .mateRequested(let p), .mateDeclined(let p), .mateRequestCancelled(let p): return try encoder.encode(p)
            case .mateAccepted(let p): return try encoder.encode(p)
            case .matesUnpaired(let p): return try encoder.encode(p)
            case .walkRequested(let p): return try p.handwrittenJSON(part) ?? encoder.encode(p)
            case .walkAccepted(let p), .walkDeclined(let p), .walkCancelled(let p), .walkExpired(let p):
                return try encoder.encode(p)
            case .walkLogged(let p): return try encoder.encode(p)
            case .walkLogVisibilityChanged(let p): return try encoder.encode(p)
            case .walkLogDeleted(let p): return try encoder.encode(p)
            case .messageSent(let p): return try encoder.encode(p)
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
    /// The same bytes as `JSONEncoder` gives (sorted keys, no escaped slashes), written by hand
    /// for the event every SendWalk appends: the encoder was 5 % of the server's CPU per
    /// command. Nil when a value is outside what this writer knows to format exactly like the
    /// encoder (exponents, negative zero, control or line-separator characters), which then
    /// encodes as before. A test compares both on many random walks.
    func handwrittenJSON(_ part: EventPart = .whole) -> Data? {
        guard let latitude = Self.plainNumber(latitude), let longitude = Self.plainNumber(longitude),
            Self.isPlain(message), placeName.map(Self.isPlain) ?? true
        else { return nil }
        // Bytes, not String concatenation: the temporaries and scalar-by-scalar appends of
        // the first version were still 2.5% of the server's CPU per SendWalk.
        var out: [UInt8] = []
        out.reserveCapacity(256 + message.utf8.count + (placeName?.utf8.count ?? 0))
        func add(_ text: StaticString) { text.withUTF8Buffer { out.append(contentsOf: $0) } }
        // Members in sorted key order, each part keeping that order.
        var first = true
        func key(_ text: StaticString) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            add(text)
        }
        add("{")
        if part.writesClear {
            key(#""created_at":""#)
            Timestamp.appendUTF8(createdAt, to: &out)
            add(#"""#)
            key(#""expires_at":""#)
            Timestamp.appendUTF8(expiresAt, to: &out)
            add(#"""#)
            key(#""from":""#)
            from.appendLowercase(to: &out)
            add(#"""#)
        }
        if part.writesPersonal {
            key(#""latitude":"#)
            out.append(contentsOf: latitude.utf8)
            key(#""longitude":"#)
            out.append(contentsOf: longitude.utf8)
            key(#""message":"#)
            Self.appendQuoted(message, to: &out)
            key(#""place_name":"#)
            if let placeName { Self.appendQuoted(placeName, to: &out) } else { add("null") }
        }
        if part.writesClear {
            key(#""to":""#)
            to.appendLowercase(to: &out)
            add(#"""#)
            key(#""walk_id":""#)
            walkID.appendLowercase(to: &out)
            add(#"""#)
        }
        add("}")
        return Data(out)
    }

    /// A double as the encoder writes it, when that is plain digits: integral values without
    /// ".0", others by their shortest round-trip form.
    static func plainNumber(_ value: Double) -> String? {
        guard value.isFinite, !(value == 0 && value.sign == .minus) else { return nil }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = value.description
        // Bytes: `String.contains(_:)` with a string goes through Foundation (NSString bridging).
        return text.utf8.contains(UInt8(ascii: "e")) ? nil : text
    }

    /// Text the writer quotes exactly like the encoder: no control characters, no U+2028/2029.
    static func isPlain(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F && $0.value != 0x2028 && $0.value != 0x2029 }
    }

    /// `"` and `\` escaped, everything else as is (`isPlain` text): byte by byte is safe, as
    /// neither byte occurs inside a multi-byte UTF-8 sequence.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}
