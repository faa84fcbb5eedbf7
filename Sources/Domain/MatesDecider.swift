import Foundation

/// The decider of a `mates-<lo>-<hi>` stream: mate requests and their answers, and unpairing.
/// One stream per pair makes "one relationship per pair" a hard rule.
public enum MatesDecider: Decider {
    public enum Command: Sendable, Equatable {
        /// `from` asks `to`, presenting a drop token; `requestID` names the request if one is created.
        case request(requestID: UUID, from: UUID, to: UUID, dropToken: PresentedDropToken?)
        case accept(requestID: UUID, by: UUID)
        case decline(requestID: UUID, by: UUID)
        case cancel(requestID: UUID, by: UUID)
        case unpair(by: UUID, mate: UUID)
        /// `user` deletes their account: the pair with `partner` is settled on their behalf.
        case erase(user: UUID, partner: UUID)
        /// `user`'s account is suspended: a pending request either way is withdrawn.
        case withdraw(user: UUID, partner: UUID)
        /// `by` blocks `user`: unpaired, a pending request withdrawn, and no more requests.
        case block(by: UUID, user: UUID)
        /// `by` lifts their block of `user` (they stay unpaired).
        case unblock(by: UUID, user: UUID)
    }

    public static let initial = MatesState.initial

    public static func evolve(_ state: MatesState, _ event: Event) -> MatesState {
        var s = state
        switch event {
        case .mateRequested(let e):
            s.status = .pending(requestID: e.requestID, from: e.from, to: e.to)
            s.requests[e.requestID] = .init(
                requestID: e.requestID,
                from: e.from,
                to: e.to,
                status: .pending,
                createdAt: e.at,
                updatedAt: e.at
            )
        case .mateAccepted(let e):
            s.status = .mates(since: e.at)
            s.requests[e.requestID]?.status = .accepted
            s.requests[e.requestID]?.updatedAt = e.at
        case .mateDeclined(let e):
            s.status = .none
            s.requests[e.requestID]?.status = .declined
            s.requests[e.requestID]?.updatedAt = e.at
        case .mateRequestCancelled(let e):
            s.status = .none
            s.requests[e.requestID]?.status = .cancelled
            s.requests[e.requestID]?.updatedAt = e.at
        case .matesUnpaired:
            s.status = .none
        case .userBlocked(let e):
            s.blockedBy.insert(e.by)
        case .userUnblocked(let e):
            s.blockedBy.remove(e.by)
        default:
            break
        }
        return s
    }

    public static func decide(_ command: Command, _ state: MatesState, context: DecisionContext) throws(DomainError) -> [Event] {
        let now = context.now
        switch command {
        case .request(let requestID, let from, let to, let dropToken):
            // Order matters: self first, then the token (so a stranger without a token learns
            // nothing about the pair), then the state of the pair.
            guard from != to else { throw .cannotRequestSelf }
            // A blocked pair is refused exactly like a bad token: the blocked user learns nothing.
            guard !state.isBlocked else { throw .invalidDropToken }
            guard let token = dropToken, token.issuedBy == to, !token.used else { throw .invalidDropToken }
            guard now < token.expiresAt else { throw .dropTokenExpired }
            switch state.status {
            case .mates:
                throw .alreadyMates
            case .pending(let pendingID, let pendingFrom, let pendingTo):
                // Asking again changes nothing.
                if pendingFrom == from { return [] }
                // They asked me first and now I ask them: that is a yes, as in the app.
                return [.mateAccepted(MateAccepted(requestID: pendingID, from: pendingFrom, to: pendingTo, at: now, mutual: true))]
            case .none:
                // Request ids are made by the server; reuse would merge two requests' histories.
                guard state.requests[requestID] == nil else { throw .alreadyExists }
                return [.mateRequested(MateRequestUpdate(requestID: requestID, from: from, to: to, at: now))]
            }

        case .accept(let requestID, let by):
            let request = try pendingRequest(requestID, answeredBy: by, in: state)
            return [.mateAccepted(MateAccepted(requestID: requestID, from: request.from, to: request.to, at: now, mutual: false))]

        case .decline(let requestID, let by):
            let request = try pendingRequest(requestID, answeredBy: by, in: state)
            return [.mateDeclined(MateRequestUpdate(requestID: requestID, from: request.from, to: request.to, at: now))]

        case .cancel(let requestID, let by):
            guard let request = state.requests[requestID] else { throw .notFound }
            guard request.from == by else { throw .notRequester }
            guard state.pendingRequestID == requestID else { throw .notPending }
            return [.mateRequestCancelled(MateRequestUpdate(requestID: requestID, from: request.from, to: request.to, at: now))]

        case .unpair(let by, let mate):
            // Either mate may unpair; mates are symmetric.
            guard by != mate, state.areMates else { throw .notMates }
            return [.matesUnpaired(MatesUnpaired(by: by, mate: mate, at: now))]

        case .erase(let user, let partner):
            // A deleted account leaves no relationship behind: mates are unpaired and a pending
            // request is withdrawn whichever way it went. Anything else is already settled.
            return settle(state, user: user, partner: partner, unpair: true, now: now)

        case .withdraw(let user, let partner):
            // A suspended account keeps its mates, but nothing waits on it.
            return settle(state, user: user, partner: partner, unpair: false, now: now)

        case .block(let by, let user):
            guard by != user else { throw .validationFailed(field: "user_id", reason: "you cannot block yourself") }
            // Blocking again changes nothing (a retry, two devices), and so does blocking someone
            // never met: they cannot reach me anyway, and a block list must not show a stranger's
            // name to someone who only guessed their id.
            guard !state.blockedBy.contains(by), state.haveMet else { return [] }
            return settle(state, user: by, partner: user, unpair: true, now: now)
                + [.userBlocked(BlockUpdate(by: by, blocked: user, at: now))]

        case .unblock(let by, let user):
            guard by != user else { throw .validationFailed(field: "user_id", reason: "you cannot unblock yourself") }
            guard state.blockedBy.contains(by) else { return [] }
            return [.userUnblocked(BlockUpdate(by: by, blocked: user, at: now))]
        }
    }

    /// Ends what ties `user` to `partner` on their behalf: a pending request either way is
    /// withdrawn and, with `unpair`, mates are unpaired.
    private static func settle(_ state: MatesState, user: UUID, partner: UUID, unpair: Bool, now: Date) -> [Event] {
        switch state.status {
        case .mates:
            return unpair ? [.matesUnpaired(MatesUnpaired(by: user, mate: partner, at: now))] : []
        case .pending(let requestID, let from, let to):
            guard from == user || to == user else { return [] }
            return [.mateRequestCancelled(MateRequestUpdate(requestID: requestID, from: from, to: to, at: now))]
        case .none:
            return []
        }
    }

    /// The request `by` may answer: it exists (`not_found`), `by` is its addressee
    /// (`not_addressee`) and it is the pair's pending request (`not_pending`).
    private static func pendingRequest(
        _ requestID: UUID,
        answeredBy by: UUID,
        in state: MatesState
    ) throws(DomainError) -> MatesState.Request {
        guard let request = state.requests[requestID] else { throw .notFound }
        guard request.to == by else { throw .notAddressee }
        guard state.pendingRequestID == requestID else { throw .notPending }
        return request
    }
}
