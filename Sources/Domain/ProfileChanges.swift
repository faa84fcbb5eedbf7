import Foundation

/// A partial profile update (`PATCH /v1/me`): each `nil` field stays as it is.
///
/// The API does not allow changing the dog's sex, so there is no field for it.
public struct ProfileChanges: Sendable, Equatable {
    public var nickname: String?
    public var dogName: String?
    public var age: Int?
    public var neutered: Bool?
    public var size: Size?
    public var keywords: [Keyword]?
    /// `nil`: unchanged; `.some(nil)`: remove the picture; `.some(name)`: set it.
    public var profileImage: String??

    public init(
        nickname: String? = nil,
        dogName: String? = nil,
        age: Int? = nil,
        neutered: Bool? = nil,
        size: Size? = nil,
        keywords: [Keyword]? = nil,
        profileImage: String?? = nil
    ) {
        self.nickname = nickname
        self.dogName = dogName
        self.age = age
        self.neutered = neutered
        self.size = size
        self.keywords = keywords
        self.profileImage = profileImage
    }

    /// These changes with every given field checked and cleaned by the profile's rules. The
    /// command handler names the nickname's stream before deciding, so a bad nickname must be
    /// refused before that (and a refused request then touches no stream at all).
    public func validated() throws(DomainError) -> ProfileChanges {
        var changes = self
        changes.nickname = try nickname.map(DogProfile.validNickname)
        changes.dogName = try dogName.map(DogProfile.validDogName)
        if let age { try DogProfile.checkAge(age) }
        if let keywords { try DogProfile.checkKeywords(keywords) }
        if case .some(.some(let image)) = profileImage { changes.profileImage = .some(try DogProfile.validProfileImage(image)) }
        return changes
    }

    /// The profile after applying these changes (not yet validated).
    public func applied(to profile: DogProfile) -> DogProfile {
        var p = profile
        if let nickname { p.nickname = nickname }
        if let dogName { p.dogName = dogName }
        if let age { p.age = age }
        if let neutered { p.neutered = neutered }
        if let size { p.size = size }
        if let keywords { p.keywords = keywords }
        if let profileImage { p.profileImage = profileImage }
        return p
    }
}
