import Foundation

/// The dog card: the owner's nickname and the dog's traits. One user = one owner = one dog.
///
/// JSON keys are snake_case as in the API; `profile_image` is written as `null` when absent,
/// so that the stored JSON always has the same keys.
public struct DogProfile: Sendable, Equatable, Codable {
    /// The owner's nickname, 2–8 characters, unique after NFKC case folding (`FreeText.nicknameKey`).
    public var nickname: String
    /// The dog's name, 1–15 characters.
    public var dogName: String
    /// The dog's age in years, 0–99.
    public var age: Int
    public var sex: Sex
    public var neutered: Bool
    public var size: Size
    /// One or two distinct keywords, in the order the owner chose them.
    public var keywords: [Keyword]
    /// The name of an uploaded picture, 1–200 characters, or `nil`.
    public var profileImage: String?

    public init(
        nickname: String,
        dogName: String,
        age: Int,
        sex: Sex,
        neutered: Bool,
        size: Size,
        keywords: [Keyword],
        profileImage: String? = nil
    ) {
        self.nickname = nickname
        self.dogName = dogName
        self.age = age
        self.sex = sex
        self.neutered = neutered
        self.size = size
        self.keywords = keywords
        self.profileImage = profileImage
    }

    /// Limits of the profile fields (characters are counted as the user sees them).
    public static let nicknameLength = 2...8
    public static let dogNameLength = 1...15
    public static let ageRange = 0...99
    public static let keywordCount = 1...2
    public static let profileImageLength = 1...200

    /// The profile as stored: every field rule checked and the text fields cleaned by
    /// `FreeText` (NFC); throws `validation_failed` naming the first bad field.
    public func validated() throws(DomainError) -> DogProfile {
        var profile = self
        profile.nickname = try Self.validNickname(nickname)
        profile.dogName = try Self.validDogName(dogName)
        try Self.checkAge(age)
        try Self.checkKeywords(keywords)
        profile.profileImage = try profileImage.map(Self.validProfileImage)
        return profile
    }

    // One rule per field, shared by whole profiles and partial changes (`ProfileChanges`).

    static func validNickname(_ nickname: String) throws(DomainError) -> String {
        try FreeText.nickname(nickname, length: nicknameLength)
    }

    static func validDogName(_ name: String) throws(DomainError) -> String {
        try FreeText.clean(name, field: "dog_name", length: dogNameLength)
    }

    static func checkAge(_ age: Int) throws(DomainError) {
        guard ageRange.contains(age) else { throw .validationFailed(field: "age", reason: "must be 0 to 99") }
    }

    static func checkKeywords(_ keywords: [Keyword]) throws(DomainError) {
        guard keywordCount.contains(keywords.count), Set(keywords).count == keywords.count else {
            throw .validationFailed(field: "keywords", reason: "must be 1 or 2 distinct keywords")
        }
    }

    static func validProfileImage(_ name: String) throws(DomainError) -> String {
        try FreeText.clean(name, field: "profile_image", length: profileImageLength)
    }

    enum CodingKeys: String, CodingKey {
        case nickname
        case dogName = "dog_name"
        case age, sex, neutered, size, keywords
        case profileImage = "profile_image"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(nickname, forKey: .nickname)
        try c.encode(dogName, forKey: .dogName)
        try c.encode(age, forKey: .age)
        try c.encode(sex, forKey: .sex)
        try c.encode(neutered, forKey: .neutered)
        try c.encode(size, forKey: .size)
        try c.encode(keywords, forKey: .keywords)
        try c.encode(profileImage, forKey: .profileImage)  // explicit null keeps the key set stable
    }
}
