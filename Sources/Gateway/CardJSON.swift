import Domain
import Foundation
import JSONText
import Projections

/// The dog card of API.md: a profile without `created_at`, held as its JSON text.
///
/// Rendered here from a profile (command answers, which fold the log), or taken as the
/// `profiles` read model stored it (list pages copy it without reading a column or writing a
/// member per card). Both give the same bytes; a test compares them.
public struct CardJSON: JSONObjectWritable, Sendable, Equatable {
    public let userID: UUID
    /// The card object, `{"user_id":…}`.
    public let json: [UInt8]

    public init(userID: UUID, profile: DogProfile) {
        var writer = JSONObjectWriter(capacity: 256)
        writer.writeObject { Members(userID: userID, profile: profile).writeMembers(&$0) }
        self.userID = userID
        self.json = writer.bytes
    }

    public init(_ row: CardRow) {
        self.userID = row.userID
        self.json = row.json
    }

    public func writeMembers(_ object: inout JSONObjectWriter) {
        object.members(ofObject: json)
    }

    /// The members of a card, in API.md's order.
    struct Members: JSONObjectWritable {
        let userID: UUID
        let profile: DogProfile

        func writeMembers(_ object: inout JSONObjectWriter) {
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
