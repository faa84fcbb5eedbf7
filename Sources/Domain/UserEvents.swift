import Foundation
import UUIDText

// Payloads of the `user-<uuid>` stream. Each carries the whole profile, so the profiles
// read model is built from events alone, without looking back at earlier events.

/// `user_registered`: a new owner signed up with their dog's profile.
public struct UserRegistered: Sendable, Equatable, Codable {
    public var userID: UUID
    public var profile: DogProfile
    public var registeredAt: Date

    public init(userID: UUID, profile: DogProfile, registeredAt: Date) {
        self.userID = userID
        self.profile = profile
        self.registeredAt = registeredAt
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case profile
        case registeredAt = "registered_at"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesClear {
            try c.encode(userID.lowercasedString, forKey: .userID)
            try c.encode(registeredAt, forKey: .registeredAt)
        }
        if part.writesPersonal { try c.encode(profile, forKey: .profile) }
    }
}

/// `profile_updated`: the owner changed their profile; carries the full new profile.
public struct ProfileUpdated: Sendable, Equatable, Codable {
    public var userID: UUID
    public var profile: DogProfile
    public var updatedAt: Date

    public init(userID: UUID, profile: DogProfile, updatedAt: Date) {
        self.userID = userID
        self.profile = profile
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case profile
        case updatedAt = "updated_at"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesClear {
            try c.encode(userID.lowercasedString, forKey: .userID)
            try c.encode(updatedAt, forKey: .updatedAt)
        }
        if part.writesPersonal { try c.encode(profile, forKey: .profile) }
    }
}

/// `device_token_set`: the phone's push token (hex). No longer written (device tokens belong to
/// sessions, outside the log); older logs hold it, and folds read past it.
public struct DeviceTokenSet: Sendable, Equatable, Codable {
    public var userID: UUID
    public var deviceToken: String
    public var at: Date

    public init(userID: UUID, deviceToken: String, at: Date) {
        self.userID = userID
        self.deviceToken = deviceToken
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case deviceToken = "device_token"
        case at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesClear {
            try c.encode(userID.lowercasedString, forKey: .userID)
            try c.encode(at, forKey: .at)
        }
        if part.writesPersonal { try c.encode(deviceToken, forKey: .deviceToken) }
    }
}

/// `notification_dismissed`: the user removed one entry from their inbox.
public struct NotificationDismissed: Sendable, Equatable, Codable {
    public var userID: UUID
    /// The notification's id, which is the id of the event that caused it.
    public var notificationID: UUID
    public var at: Date

    public init(userID: UUID, notificationID: UUID, at: Date) {
        self.userID = userID
        self.notificationID = notificationID
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case notificationID = "notification_id"
        case at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userID.lowercasedString, forKey: .userID)
        try c.encode(notificationID.lowercasedString, forKey: .notificationID)
        try c.encode(at, forKey: .at)
    }
}

/// `user_deleted`: the owner deleted their account. Written in the same transaction that
/// destroys their data key, so every event sealed under that key comes before it in the feed.
public typealias UserDeleted = UserMoment

/// One user, one moment: `user_deleted`, `user_unsuspended`, `notifications_cleared`.
public struct UserMoment: Sendable, Equatable, Codable {
    public var userID: UUID
    public var at: Date

    public init(userID: UUID, at: Date) {
        self.userID = userID
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userID.lowercasedString, forKey: .userID)
        try c.encode(at, forKey: .at)
    }
}
