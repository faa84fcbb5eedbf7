import Foundation

/// Which part of an event's JSON an encoder writes: everything, only what may stay in the clear
/// (ids, types, times, states), or only the personal fields.
///
/// The log's edge seals the personal part under the key of the user it belongs to
/// (`Event.personalDataOwner`) and stores the clear part beside the sealed box, so deleting that
/// user's key leaves nothing readable of them (DESIGN.md, "Personal data and erasure"). The
/// domain only says which fields are personal and whose; it never sees a key.
public enum EventPart: Sendable {
    case whole, clear, personal

    /// Set in an encoder's `userInfo` to write one part only.
    public static let userInfoKey = CodingUserInfoKey(rawValue: "sniffmeet.event-part")!

    /// The part `encoder` is asked to write (`whole` unless set).
    init(_ encoder: Encoder) { self = encoder.userInfo[Self.userInfoKey] as? EventPart ?? .whole }

    var writesClear: Bool { self != .personal }
    var writesPersonal: Bool { self != .clear }
}

/// An event of the log whose personal part cannot be read any more: its owner deleted their
/// account and their key is gone. Folds and projectors pass over it; what it was is still
/// known (its type and owner), what it said is not.
public struct ErasedEvent: Sendable, Equatable {
    /// The stored type name (`user_registered`, `walk_requested`, …).
    public var typeName: String
    /// The deleted user the personal part belonged to.
    public var owner: UUID

    public init(typeName: String, owner: UUID) {
        self.typeName = typeName
        self.owner = owner
    }
}

extension Event {
    /// The type names whose events carry personal fields.
    public static let personalTypeNames: Set<String> = [
        "user_registered", "profile_updated", "device_token_set", "nickname_reserved", "nickname_released", "walk_requested",
        "user_reported", "user_suspended",
        "walk_logged",
        "message_sent", "message_edited",
    ]

    /// The user whose personal data this event carries, or `nil` when it carries none. A walk's
    /// message and meeting point belong to its sender; a profile, nickname or device token to
    /// its user.
    public var personalDataOwner: UUID? {
        switch self {
        case .userRegistered(let e): e.userID
        case .profileUpdated(let e): e.userID
        case .deviceTokenSet(let e): e.userID
        case .nicknameReserved(let e), .nicknameReleased(let e): e.userID
        case .walkRequested(let e): e.from
        // A report's note is the reporter's words; without a note it carries nothing personal.
        case .userReported(let e): e.note == nil ? nil : e.reporter
        case .userSuspended(let e): e.userID
        // A walk log's figures and route digest belong to its owner.
        case .walkLogged(let e): e.owner
        // A message's text and photo belong to its sender (sealed under the message's own key,
        // itself sealed under the sender's: `messageKeyID`).
        case .messageSent(let e): e.from
        case .messageEdited(let e): e.from
        default: nil
        }
    }

    /// Every user the event names. Read models show nothing that names a deleted user, so
    /// projectors pass over an event naming one (`user_deleted` itself aside).
    public var namedUsers: [UUID] {
        switch self {
        case .userRegistered(let e): [e.userID]
        case .profileUpdated(let e): [e.userID]
        case .deviceTokenSet(let e): [e.userID]
        case .notificationDismissed(let e): [e.userID]
        case .userDeleted(let e): [e.userID]
        case .nicknameReserved(let e), .nicknameReleased(let e): [e.userID]
        case .mateRequested(let e), .mateDeclined(let e), .mateRequestCancelled(let e): [e.from, e.to]
        case .mateAccepted(let e): [e.from, e.to]
        case .matesUnpaired(let e): [e.by, e.mate]
        case .walkRequested(let e): [e.from, e.to]
        case .walkAccepted(let e), .walkDeclined(let e), .walkCancelled(let e), .walkExpired(let e): [e.from, e.to]
        case .notificationsCleared(let e): [e.userID]
        case .userUnsuspended(let e): [e.userID]
        case .userReported(let e): [e.reporter, e.reported]
        case .reportResolved(let e): [e.reported]
        case .userSuspended(let e): [e.userID]
        case .userBlocked(let e), .userUnblocked(let e): [e.by, e.blocked]
        case .walkLogged(let e): [e.owner]
        case .walkLogVisibilityChanged(let e): [e.owner]
        case .walkLogDeleted(let e): [e.owner]
        case .messageSent(let e): [e.from, e.to]
        case .messageEdited(let e): [e.from, e.to]
        case .messageUnsent(let e): [e.from, e.to]
        case .erased(let e): [e.owner]
        }
    }
}
