import Domain
import Foundation

/// The dog card of API.md: a profile without `created_at`.
public struct CardJSON: JSONObjectWritable, Sendable, Equatable {
    public var userID: UUID
    public var profile: DogProfile

    public init(userID: UUID, profile: DogProfile) {
        self.userID = userID
        self.profile = profile
    }

    public func writeMembers(_ object: inout JSONObjectWriter) {
        object.id("user_id", userID)
        object.string("nickname", profile.nickname)
        object.string("dog_name", profile.dogName)
        object.int("age", profile.age)
        object.string("sex", profile.sex.rawValue)
        object.bool("neutered", profile.neutered)
        object.string("size", profile.size.rawValue)
        object.strings("keywords", profile.keywords.lazy.map(\.rawValue))
        object.string("profile_image", profile.profileImage)  // explicit null keeps the key set stable
    }
}

/// The profile object of API.md: the card plus `created_at`.
public struct ProfileJSON: JSONObjectWritable, Sendable, Equatable {
    public var card: CardJSON
    public var createdAt: Date

    public func writeMembers(_ object: inout JSONObjectWriter) {
        card.writeMembers(&object)
        object.timestamp("created_at", createdAt)
    }
}
