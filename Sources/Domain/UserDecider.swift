import Foundation

/// The decider of the `user-<uuid>` stream: sign-up, profile changes, dismissed inbox entries,
/// deletion. (Device tokens belong to sessions, outside the log: `DeviceRegistration`.)
///
/// Nickname uniqueness is not decided here but by `NicknameDecider` on the nickname streams,
/// which `Command.steps(loaded:)` writes in the same append.
public enum UserDecider: Decider {
    /// What can be asked of one user stream.
    public enum Command: Sendable, Equatable {
        case register(userID: UUID, profile: DogProfile)
        case updateProfile(userID: UUID, changes: ProfileChanges)
        case dismissNotification(userID: UUID, notificationID: UUID)
        /// The owner deletes the account.
        case delete(userID: UUID)
    }

    public static let initial = UserState.initial

    public static func evolve(_ state: UserState, _ event: Event) -> UserState {
        var s = state
        switch event {
        case .userRegistered(let e):
            s.userID = e.userID
            s.profile = e.profile
            s.registeredAt = e.registeredAt
        case .profileUpdated(let e):
            s.profile = e.profile
        case .deviceTokenSet(let e):
            s.deviceToken = e.deviceToken
        case .notificationDismissed(let e):
            s.dismissedNotifications.insert(e.notificationID)
        case .userDeleted:
            // Keep only that it existed and is gone.
            s = UserState(userID: s.userID, registeredAt: s.registeredAt)
            s.isDeleted = true
        default:
            break
        }
        return s
    }

    public static func decide(_ command: Command, _ state: UserState, context: DecisionContext) throws(DomainError) -> [Event] {
        let now = context.now
        switch command {
        case .register(let userID, let profile):
            let profile = try profile.validated()
            // User ids are made by the server; a second sign-up on one stream is a bug, not a retry
            // (retries are caught earlier by the command id).
            guard !state.isRegistered, !state.isDeleted else { throw .alreadyExists }
            return [.userRegistered(UserRegistered(userID: userID, profile: profile, registeredAt: now))]

        case .updateProfile(let userID, let changes):
            guard let current = state.profile else { throw .userNotFound }
            let updated = try changes.applied(to: current).validated()
            // Nothing changed: record nothing.
            guard updated != current else { return [] }
            return [.profileUpdated(ProfileUpdated(userID: userID, profile: updated, updatedAt: now))]

        case .dismissNotification(let userID, let notificationID):
            guard state.isRegistered else { throw .userNotFound }
            // Dismissing twice (a retry, two devices) changes nothing.
            guard !state.dismissedNotifications.contains(notificationID) else { return [] }
            return [.notificationDismissed(NotificationDismissed(userID: userID, notificationID: notificationID, at: now))]

        case .delete(let userID):
            // A deleted account has no profile, so it cannot be deleted twice (nor changed at all).
            guard state.isRegistered else { throw .userNotFound }
            return [.userDeleted(UserDeleted(userID: userID, at: now))]
        }
    }
}

extension Unicode.Scalar {
    /// 0-9, a-f, A-F only (`Character.isHexDigit` also accepts fullwidth forms).
    var isASCIIHexDigit: Bool {
        switch value {
        case 0x30...0x39, 0x41...0x46, 0x61...0x66: true
        default: false
        }
    }
}
