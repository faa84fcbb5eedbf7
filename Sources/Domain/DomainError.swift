import Foundation

/// Why a command was refused. Each case has a stable `code` that the API sends to clients.
public enum DomainError: Error, Equatable, Sendable {
    /// A field is out of range; `field` names it as in the API (snake_case).
    case validationFailed(field: String, reason: String)
    /// The nickname is held by another user.
    case nicknameTaken
    /// The two users are already mates.
    case alreadyMates
    /// A user asked to become their own mate.
    case cannotRequestSelf
    /// The drop token is unknown, was handed out by someone else, or was already used.
    case invalidDropToken
    /// The drop token was right but its 5 minutes are over.
    case dropTokenExpired
    /// Only the addressee may answer.
    case notAddressee
    /// Only the requester may cancel a mate request.
    case notRequester
    /// The mate request is no longer the pending one of the pair.
    case notPending
    /// The two users are not mates.
    case notMates
    /// The walk request was already answered (or cancelled) differently.
    case alreadyAnswered
    /// The walk request is past its deadline.
    case walkExpired
    /// Only the sender may cancel a walk request.
    case notSender
    /// The request or walk does not exist (or the caller may not learn that it does).
    case notFound
    /// The user is not registered.
    case userNotFound
    /// A stream that must be new already exists (server-made ids collided; never a client's fault).
    case alreadyExists
    /// The message was unsent: it cannot be edited.
    case messageUnsent
    /// A message can be edited only within 15 minutes of sending it.
    case editWindowPassed

    /// The stable error code of the API.
    public var code: String {
        switch self {
        case .validationFailed: "validation_failed"
        case .nicknameTaken: "nickname_taken"
        case .alreadyMates: "already_mates"
        case .cannotRequestSelf: "cannot_request_self"
        case .invalidDropToken: "invalid_drop_token"
        case .dropTokenExpired: "drop_token_expired"
        case .notAddressee: "not_addressee"
        case .notRequester: "not_requester"
        case .notPending: "not_pending"
        case .notMates: "not_mates"
        case .alreadyAnswered: "already_answered"
        case .walkExpired: "walk_expired"
        case .notSender: "not_sender"
        case .notFound: "not_found"
        case .userNotFound: "user_not_found"
        case .alreadyExists: "already_exists"
        case .messageUnsent: "message_unsent"
        case .editWindowPassed: "edit_window_passed"
        }
    }

    /// The offending field for `validation_failed`, else `nil`.
    public var field: String? {
        if case .validationFailed(let field, _) = self { return field }
        return nil
    }

    /// A human-readable explanation (not stable; clients must use `code`).
    public var message: String {
        switch self {
        case .validationFailed(let field, let reason): "\(field): \(reason)"
        case .nicknameTaken: "This nickname is already taken."
        case .alreadyMates: "You are already mates."
        case .cannotRequestSelf: "You cannot become your own mate."
        case .invalidDropToken: "The drop token is not valid for this user."
        case .dropTokenExpired: "The drop token has expired."
        case .notAddressee: "Only the addressee can answer this request."
        case .notRequester: "Only the requester can cancel this request."
        case .notPending: "The request is not pending."
        case .notMates: "You are not mates."
        case .alreadyAnswered: "The walk request was already answered."
        case .walkExpired: "The walk request has expired."
        case .notSender: "Only the sender can cancel this walk request."
        case .notFound: "Not found."
        case .userNotFound: "The user does not exist."
        case .alreadyExists: "It already exists."
        case .messageUnsent: "The message was unsent."
        case .editWindowPassed: "A message can be edited only within 15 minutes of sending it."
        }
    }
}
