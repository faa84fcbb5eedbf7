import Foundation

/// Everything a client (or the expiry job) can ask SniffMeet to do.
///
/// Ids of things a command creates (`userID` on sign-up, `requestID`, `walkID`) are made by the
/// command handler, so that `decide` stays a pure function of its inputs.
public enum Command: Sendable, Equatable {
    /// Sign up with a dog profile; reserves the nickname.
    case registerUser(userID: UUID, profile: DogProfile)
    /// Change parts of the profile; a new nickname releases the old one and reserves the new one.
    case updateProfile(userID: UUID, changes: ProfileChanges)
    /// Remove one entry from the user's inbox (the notification id is the id of the event that
    /// caused it). Recorded as an event so that a rebuilt inbox stays without it.
    case dismissNotification(userID: UUID, notificationID: UUID)
    /// Ask `to` to become mates, with the drop token `to` handed out (as found by the handler).
    /// `requestID` names the new request if one is created.
    case requestMate(requestID: UUID, from: UUID, to: UUID, dropToken: PresentedDropToken?)
    /// The addressee accepts the request.
    case acceptMate(requestID: UUID, pair: MatePair, by: UUID)
    /// The addressee declines the request.
    case declineMate(requestID: UUID, pair: MatePair, by: UUID)
    /// The requester withdraws the request.
    case cancelMateRequest(requestID: UUID, pair: MatePair, by: UUID)
    /// Stop being mates with `mate`.
    case unpair(by: UUID, mate: UUID)
    /// Invite a mate for a walk at a meeting point.
    case sendWalk(walkID: UUID, from: UUID, to: UUID, message: String, latitude: Double, longitude: Double, placeName: String?)
    /// The addressee answers a walk request.
    case respondWalk(walkID: UUID, by: UUID, answer: WalkAnswer)
    /// The sender withdraws a walk request.
    case cancelWalk(walkID: UUID, by: UUID)
    /// The expiry job marks a walk past its deadline.
    case expireWalk(walkID: UUID)
    /// Delete the account for good: the user stream ends, the nickname is free again, and every
    /// pair and walk the account has a part in (`partners`, `walks`, as the handler found them)
    /// is settled. The log's edge destroys the user's key in the same transaction.
    case deleteAccount(userID: UUID, partners: [UUID], walks: [UUID])
    /// Empty the user's inbox (entries made later stay).
    case clearNotifications(userID: UUID)
    /// `by` blocks `user`: unpaired, a pending mate request withdrawn, and the pending walks
    /// between them (`walks`, as the handler found them) cancelled. Nothing when `user` does
    /// not exist, so the answer tells nobody whether they do.
    case block(by: UUID, user: UUID, walks: [UUID])
    /// `by` lifts their block of `user`.
    case unblock(by: UUID, user: UUID)
    /// `reporter` reports `reported`, someone they have had a mate request (and so maybe walks)
    /// with; `walkID` names the walk it is about, one between the two.
    /// `messageID`, when given, must be a message `reported` sent to `reporter`.
    case report(reportID: UUID, reporter: UUID, reported: UUID, reason: ReportReason, walkID: UUID?, messageID: UUID? = nil, note: String?)
    /// An operator marks a report about `reported` dealt with.
    case resolveReport(reportID: UUID, reported: UUID, by: String = OperatorNames.admin)
    /// An operator suspends `userID`: their pending mate requests (with `partners`) and pending
    /// walks are withdrawn in the same append. (Their sessions end beside it, outside the log.)
    case suspendUser(userID: UUID, reason: String, partners: [UUID], walks: [UUID], by: String = OperatorNames.admin)
    /// An operator lifts a suspension.
    case unsuspendUser(userID: UUID, by: String = OperatorNames.admin)
    /// Record a walk the server measured (its route stored beside the append, outside the log),
    /// optionally tied to an accepted walk request of the owner.
    case recordWalkLog(walkLogID: UUID, owner: UUID, walkID: UUID?, figures: WalkLogFigures, visibility: WalkLogVisibility)
    /// The owner changes who sees a walk log.
    case changeWalkLogVisibility(walkLogID: UUID, by: UUID, visibility: WalkLogVisibility)
    /// The owner deletes a walk log (its route's key and row go in the same transaction).
    case deleteWalkLog(walkLogID: UUID, by: UUID)
    /// Write to a mate (`messageID` made by the handler); a text, a chat photo, or both.
    case sendMessage(messageID: UUID, from: UUID, to: UUID, text: String?, photoID: UUID?)
    /// The sender replaces the text of their message in the conversation with `mate`.
    case editMessage(messageID: UUID, by: UUID, mate: UUID, text: String)
    /// The sender unsends their message in the conversation with `mate`, for both of them. The
    /// log's edge destroys the message's key in the same transaction.
    case unsendMessage(messageID: UUID, by: UUID, mate: UUID)
    /// The one-time upgrade (`sniffmeet upgrade nicknames`): `userID`'s current nickname is
    /// reserved on its keyed stream, where a reservation made before nickname streams had keyed
    /// names is missing. Nothing for a user who holds it already, or is deleted or unknown.
    case reclaimNickname(userID: UUID)

    /// The command's name, for metadata and logs.
    public var name: String {
        switch self {
        case .registerUser: "RegisterUser"
        case .updateProfile: "UpdateProfile"
        case .dismissNotification: "DismissNotification"
        case .requestMate: "RequestMate"
        case .acceptMate: "AcceptMate"
        case .declineMate: "DeclineMate"
        case .cancelMateRequest: "CancelMateRequest"
        case .unpair: "Unpair"
        case .sendWalk: "SendWalk"
        case .respondWalk: "RespondWalk"
        case .cancelWalk: "CancelWalk"
        case .expireWalk: "ExpireWalk"
        case .deleteAccount: "DeleteAccount"
        case .clearNotifications: "ClearNotifications"
        case .block: "Block"
        case .unblock: "Unblock"
        case .report: "Report"
        case .resolveReport: "ResolveReport"
        case .suspendUser: "SuspendUser"
        case .unsuspendUser: "UnsuspendUser"
        case .recordWalkLog: "RecordWalkLog"
        case .changeWalkLogVisibility: "ChangeWalkLogVisibility"
        case .deleteWalkLog: "DeleteWalkLog"
        case .sendMessage: "SendMessage"
        case .editMessage: "EditMessage"
        case .unsendMessage: "UnsendMessage"
        case .reclaimNickname: "ReclaimNickname"
        }
    }
}
