import Domain
import Foundation

/// The dog card of API.md: a profile without `created_at`.
public struct CardJSON: Encodable, Sendable, Equatable {
    public var userID: UUID
    public var profile: DogProfile

    public init(userID: UUID, profile: DogProfile) {
        self.userID = userID
        self.profile = profile
    }

    enum CodingKeys: String, CodingKey { case userID = "user_id" }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userID.uuidString.lowercased(), forKey: .userID)
        try profile.encode(to: encoder)  // same keyed container: snake_case fields, explicit null image
    }
}

/// The profile object of API.md: the card plus `created_at`.
public struct ProfileJSON: Encodable, Sendable, Equatable {
    public var card: CardJSON
    public var createdAt: Date

    enum CodingKeys: String, CodingKey { case createdAt = "created_at" }

    public func encode(to encoder: Encoder) throws {
        try card.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Timestamp.string(from: createdAt), forKey: .createdAt)
    }
}
