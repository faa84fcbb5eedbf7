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
    /// Inbox entries the user removed (notification ids); dismissing one again changes nothing.
    public var dismissedNotifications: Set<UUID>
    /// The owner deleted the account: nothing more can happen on this stream.
    public var isDeleted: Bool = false
    /// An operator suspended the account (until unsuspended).
    public var isSuspended: Bool = false
    /// Reports about this user by id, `true` while open.
    public var reports: [UUID: Bool] = [:]

    public init(
        userID: UUID? = nil,
        profile: DogProfile? = nil,
        registeredAt: Date? = nil,
        deviceToken: String? = nil,
        dismissedNotifications: Set<UUID> = []
    ) {
        self.userID = userID
        self.profile = profile
        self.registeredAt = registeredAt
        self.deviceToken = deviceToken
        self.dismissedNotifications = dismissedNotifications
    }

    /// A stream with no events: nobody registered.
    public static let initial = UserState()

    public var isRegistered: Bool { profile != nil }
    /// The nickname as the owner typed it (its stream name is the lowercase form).
    public var nickname: String? { profile?.nickname }
}
