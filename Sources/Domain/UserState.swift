import Foundation

/// What the `user-<uuid>` stream knows: whether the user is registered, their dog profile
/// and their push token.
public struct UserState: Sendable, Equatable {
    public var userID: UUID?
    /// The current profile; `nil` until `user_registered`.
    public var profile: DogProfile?
    public var registeredAt: Date?
    /// The last device token set, if any.
    public var deviceToken: String?

    public init(userID: UUID? = nil, profile: DogProfile? = nil, registeredAt: Date? = nil, deviceToken: String? = nil) {
        self.userID = userID
        self.profile = profile
        self.registeredAt = registeredAt
        self.deviceToken = deviceToken
    }

    /// A stream with no events: nobody registered.
    public static let initial = UserState()

    public var isRegistered: Bool { profile != nil }
    /// The nickname as the owner typed it (its stream name is the lowercase form).
    public var nickname: String? { profile?.nickname }
}
