import Foundation
import UUIDText

// Payloads of the `walk-<uuid>` stream. `from` is always the sender and `to` the addressee.

/// `walk_requested`: a walk invitation with a meeting point, answerable until `expiresAt`.
public struct WalkRequested: Sendable, Equatable, Codable {
    public var walkID: UUID
    /// The sender.
    public var from: UUID
    /// The addressee.
    public var to: UUID
    public var message: String
    public var latitude: Double
    public var longitude: Double
    public var placeName: String?
    public var createdAt: Date
    public var expiresAt: Date

    public init(
        walkID: UUID,
        from: UUID,
        to: UUID,
        message: String,
        latitude: Double,
        longitude: Double,
        placeName: String?,
        createdAt: Date,
        expiresAt: Date
    ) {
        self.walkID = walkID
        self.from = from
        self.to = to
        self.message = message
        self.latitude = latitude
        self.longitude = longitude
        self.placeName = placeName
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case walkID = "walk_id"
        case from, to, message, latitude, longitude
        case placeName = "place_name"
        case
            createdAt = "created_at"
        case expiresAt = "expires_at"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesClear {
            try c.encode(walkID.lowercasedString, forKey: .walkID)
            try c.encode(from.lowercasedString, forKey: .from)
            try c.encode(to.lowercasedString, forKey: .to)
            try c.encode(createdAt, forKey: .createdAt)
            try c.encode(expiresAt, forKey: .expiresAt)
        }
        if part.writesPersonal {
            try c.encode(message, forKey: .message)
            try c.encode(latitude, forKey: .latitude)
            try c.encode(longitude, forKey: .longitude)
            try c.encode(placeName, forKey: .placeName)  // explicit null keeps the key set stable
        }
    }
}

/// `walk_accepted`, `walk_declined`, `walk_cancelled`, `walk_expired`: how a walk request ended.
public struct WalkUpdate: Sendable, Equatable, Codable {
    public var walkID: UUID
    /// The sender.
    public var from: UUID
    /// The addressee.
    public var to: UUID
    public var at: Date

    public init(walkID: UUID, from: UUID, to: UUID, at: Date) {
        self.walkID = walkID
        self.from = from
        self.to = to
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case walkID = "walk_id"
        case from, to, at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(walkID.lowercasedString, forKey: .walkID)
        try c.encode(from.lowercasedString, forKey: .from)
        try c.encode(to.lowercasedString, forKey: .to)
        try c.encode(at, forKey: .at)
    }
}
