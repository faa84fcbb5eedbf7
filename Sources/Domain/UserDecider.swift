import Foundation

/// The decider of the `user-<uuid>` stream: sign-up, profile changes, dismissed inbox entries,
/// reports about the user and their suspension, deletion. (Device tokens belong to sessions, outside the log: `DeviceRegistration`.)
///
/// Nickname uniqueness is not decided here but by `NicknameDecider` on the nickname streams,
/// which `Command.steps(loaded:)` writes in the same append.
public enum UserDecider: Decider {
    /// What can be asked of one user stream.
    public enum Command: Sendable, Equatable {
        case register(userID: UUID, profile: DogProfile)
        case updateProfile(userID: UUID, changes: ProfileChanges)
        case dismissNotification(userID: UUID, notificationID: UUID)
        /// The owner empties their inbox.
        case clearNotifications(userID: UUID)
        /// `reporter` reports this stream's user (`Command.steps` checks they are related).
        case report(
            reportID: UUID,
            reporter: UUID,
            reported: UUID,
            reason: ReportReason,
            walkID: UUID?,
            messageID: UUID? = nil,
            note: String?
        )
        /// An operator has dealt with a report.
        case resolveReport(reportID: UUID, by: String = OperatorNames.admin)
        /// An operator suspends the account.
        case suspend(userID: UUID, reason: String, by: String = OperatorNames.admin)
        /// An operator lifts the suspension.
        case unsuspend(userID: UUID, by: String = OperatorNames.admin)
        /// The owner deletes the account.
        case delete(userID: UUID)
    }

    /// A report's note: 0–500 characters.
    public static let noteLength = 0...500
    /// A suspension's reason: 1–500 characters.
    public static let suspensionReasonLength = 1...500

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
        case .userReported(let e):
            s.reports[e.reportID] = true
        case .reportResolved(let e):
            s.reports[e.reportID] = false
        case .userSuspended:
            s.isSuspended = true
        case .userUnsuspended:
            s.isSuspended = false
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

        case .clearNotifications(let userID):
            guard state.isRegistered else { throw .userNotFound }
            return [.notificationsCleared(UserMoment(userID: userID, at: now))]

        case .report(let reportID, let reporter, let reported, let reason, let walkID, let messageID, let note):
            // Nobody learns from a report whether a stranger exists: an unknown user is `not_found`
            // exactly like someone the reporter has never dealt with.
            guard state.isRegistered, reporter != reported else { throw .notFound }
            let note = try note.map { text throws(DomainError) in try FreeText.clean(text, field: "note", length: noteLength) }
            guard state.reports[reportID] == nil else { throw .alreadyExists }
            return [
                .userReported(
                    UserReported(
                        reportID: reportID,
                        reporter: reporter,
                        reported: reported,
                        reason: reason,
                        walkID: walkID,
                        messageID: messageID,
                        note: note?.isEmpty == true ? nil : note,
                        at: now
                    )
                )
            ]

        case .resolveReport(let reportID, let by):
            guard let open = state.reports[reportID], let userID = state.userID else { throw .notFound }
            // Resolving twice (a retry, two operators) changes nothing.
            guard open else { return [] }
            return [.reportResolved(ReportResolved(reportID: reportID, reported: userID, at: now, operator: by))]

        case .suspend(let userID, let reason, let by):
            guard state.isRegistered else { throw .userNotFound }
            let reason = try FreeText.clean(reason, field: "reason", length: suspensionReasonLength)
            guard !state.isSuspended else { return [] }
            return [.userSuspended(UserSuspended(userID: userID, reason: reason, at: now, operator: by))]

        case .unsuspend(let userID, let by):
            guard state.isRegistered else { throw .userNotFound }
            guard state.isSuspended else { return [] }
            return [.userUnsuspended(UserUnsuspended(userID: userID, at: now, operator: by))]

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
