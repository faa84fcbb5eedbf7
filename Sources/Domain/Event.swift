import Foundation

/// Every fact SniffMeet records, for all stream kinds.
///
/// One flat enum (rather than one per stream) so the log, projectors and replay tool handle a
/// single type; each stream's `evolve` simply ignores events that are not its own.
///
/// Indirect, as `StreamState` is: events pass through decisions, seals, plans and projectors by
/// value, and each copy of an inline payload retained every text in it.
public indirect enum Event: Equatable, Sendable {
    // user-<uuid>
    case userRegistered(UserRegistered)
    case profileUpdated(ProfileUpdated)
    case deviceTokenSet(DeviceTokenSet)
    case notificationDismissed(NotificationDismissed)
    case userDeleted(UserDeleted)
    case notificationsCleared(UserMoment)
    case userReported(UserReported)
    case reportResolved(ReportResolved)
    case userSuspended(UserSuspended)
    case userUnsuspended(UserUnsuspended)
    // nickname-<lowercased>
    case nicknameReserved(NicknameClaim)
    case nicknameReleased(NicknameClaim)
    // mates-<lo>-<hi>
    case mateRequested(MateRequestUpdate)
    case mateAccepted(MateAccepted)
    case mateDeclined(MateRequestUpdate)
    case mateRequestCancelled(MateRequestUpdate)
    case matesUnpaired(MatesUnpaired)
    case userBlocked(BlockUpdate)
    case userUnblocked(BlockUpdate)
    // walk-<uuid>
    case walkRequested(WalkRequested)
    case walkAccepted(WalkUpdate)
    case walkDeclined(WalkUpdate)
    case walkCancelled(WalkUpdate)
    case walkExpired(WalkUpdate)
    // walklog-<uuid>
    case walkLogged(WalkLogged)
    case walkLogVisibilityChanged(WalkLogVisibilityChanged)
    case walkLogDeleted(WalkLogDeleted)
    // chat-<lo>-<hi>
    case messageSent(MessageSent)
    case messageEdited(MessageEdited)
    case messageUnsent(MessageUnsent)
    // any stream: an event whose personal part belonged to a deleted user (never appended)
    case erased(ErasedEvent)

    /// Every stored type name, in the order of the cases above.
    public static let typeNames: [String] = [
        "user_registered", "profile_updated", "device_token_set",
        "nickname_reserved", "nickname_released",
        "mate_requested", "mate_accepted", "mate_declined", "mate_request_cancelled", "mates_unpaired",
        "walk_requested", "walk_accepted", "walk_declined", "walk_cancelled", "walk_expired",
        "notification_dismissed", "user_deleted",
        "notifications_cleared", "user_reported", "report_resolved", "user_suspended", "user_unsuspended",
        "user_blocked", "user_unblocked",
        "walk_logged", "walk_log_visibility_changed", "walk_log_deleted",
        "message_sent", "message_edited", "message_unsent",
    ]

    /// The stable type name stored in the log's `type` column (snake_case; never renamed).
    public var typeName: String {
        switch self {
        case .userRegistered: "user_registered"
        case .profileUpdated: "profile_updated"
        case .deviceTokenSet: "device_token_set"
        case .nicknameReserved: "nickname_reserved"
        case .nicknameReleased: "nickname_released"
        case .mateRequested: "mate_requested"
        case .mateAccepted: "mate_accepted"
        case .mateDeclined: "mate_declined"
        case .mateRequestCancelled: "mate_request_cancelled"
        case .matesUnpaired: "mates_unpaired"
        case .walkRequested: "walk_requested"
        case .walkAccepted: "walk_accepted"
        case .walkDeclined: "walk_declined"
        case .walkCancelled: "walk_cancelled"
        case .walkExpired: "walk_expired"
        case .notificationDismissed: "notification_dismissed"
        case .userDeleted: "user_deleted"
        case .notificationsCleared: "notifications_cleared"
        case .userReported: "user_reported"
        case .reportResolved: "report_resolved"
        case .userSuspended: "user_suspended"
        case .userUnsuspended: "user_unsuspended"
        case .userBlocked: "user_blocked"
        case .userUnblocked: "user_unblocked"
        case .walkLogged: "walk_logged"
        case .walkLogVisibilityChanged: "walk_log_visibility_changed"
        case .walkLogDeleted: "walk_log_deleted"
        case .messageSent: "message_sent"
        case .messageEdited: "message_edited"
        case .messageUnsent: "message_unsent"
        case .erased(let e): e.typeName
        }
    }

    /// The schema version this code writes for the event's type (stored in the metadata).
    public var schemaVersion: Int { Self.currentSchemaVersion(of: typeName) }

    /// The schema version this code writes for `typeName`. All types are at version 1;
    /// bump one here together with an upcaster in `EventUpcasting` when its JSON changes.
    public static func currentSchemaVersion(of typeName: String) -> Int { 1 }
}
