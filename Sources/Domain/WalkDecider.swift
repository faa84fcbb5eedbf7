import Foundation

/// The decider of a `walk-<uuid>` stream: sending, answering, cancelling and expiring one walk
/// request. That the sender and addressee are mates is checked by `Command.steps(loaded:)`,
/// which reads the pair stream and makes it a condition of the append.
public enum WalkDecider: Decider {
    public enum Command: Sendable, Equatable {
        case send(walkID: UUID, from: UUID, to: UUID, message: String, latitude: Double, longitude: Double, placeName: String?)
        case respond(by: UUID, answer: WalkAnswer)
        case cancel(by: UUID)
        /// Written by the expiry job once the deadline has passed.
        case expire
        /// Withdrawn on behalf of its sender or addressee, whose account is deleted or suspended,
        /// or who blocked the other: a walk still waiting is cancelled.
        case erase(user: UUID)
    }

    /// Walk requests are answerable for 60 s unless configured otherwise.
    public static let defaultTTL: TimeInterval = 60
    public static let messageLength = 1...100
    public static let placeNameLength = 1...100
    public static let latitudeRange = -90.0...90.0
    public static let longitudeRange = -180.0...180.0

    public static let initial = WalkState.initial

    public static func evolve(_ state: WalkState, _ event: Event) -> WalkState {
        var s = state
        switch event {
        case .walkRequested(let e):
            s.request = e
            s.status = .pending
        case .walkAccepted(let e):
            s.status = .accepted
            s.answeredAt = e.at
        case .walkDeclined(let e):
            s.status = .declined
            s.answeredAt = e.at
        case .walkCancelled(let e):
            s.status = .cancelled
            s.answeredAt = e.at
        case .walkExpired:
            s.status = .expired
        default:
            break
        }
        return s
    }

    public static func decide(_ command: Command, _ state: WalkState, context: DecisionContext) throws(DomainError) -> [Event] {
        let now = context.now
        switch command {
        case .send(let walkID, let from, let to, let message, let latitude, let longitude, let placeName):
            let message = try FreeText.clean(message, field: "message", length: messageLength)
            // Range checks also keep NaN and infinities out of the log.
            guard latitudeRange.contains(latitude) else {
                throw .validationFailed(field: "latitude", reason: "must be between -90 and 90")
            }
            guard longitudeRange.contains(longitude) else {
                throw .validationFailed(field: "longitude", reason: "must be between -180 and 180")
            }
            let placeName = try placeName.map { name throws(DomainError) in
                try FreeText.clean(name, field: "place_name", length: placeNameLength)
            }
            // Walk ids are made by the server; the stream must be new.
            guard !state.exists else { throw .alreadyExists }
            return [
                .walkRequested(
                    WalkRequested(
                        walkID: walkID,
                        from: from,
                        to: to,
                        message: message,
                        latitude: latitude,
                        longitude: longitude,
                        placeName: placeName,
                        createdAt: now,
                        expiresAt: now.addingTimeInterval(context.walkTTL)
                    )
                )
            ]

        case .respond(let by, let answer):
            guard let walk = state.request, let status = state.status else { throw .notFound }
            guard walk.to == by else { throw .notAddressee }
            switch status {
            case .accepted, .declined:
                // Once answered, the answer stands: the same answer again is a no-op even after
                // the deadline; a different one is refused.
                if state.answer == answer { return [] }
                throw .alreadyAnswered
            case .cancelled:
                // The sender withdrew it: it was settled before this answer, like an answer.
                throw .alreadyAnswered
            case .expired:
                throw .walkExpired
            case .pending:
                // The deadline holds whether or not the expiry job has run yet.
                guard now < walk.expiresAt else { throw .walkExpired }
                let update = WalkUpdate(walkID: walk.walkID, from: walk.from, to: walk.to, at: now)
                return [answer == .accept ? .walkAccepted(update) : .walkDeclined(update)]
            }

        case .cancel(let by):
            guard let walk = state.request, let status = state.status else { throw .notFound }
            guard walk.from == by else { throw .notSender }
            switch status {
            case .cancelled:
                return []  // cancelling again changes nothing
            case .accepted, .declined:
                throw .alreadyAnswered
            case .expired:
                throw .walkExpired
            case .pending:
                guard now < walk.expiresAt else { throw .walkExpired }
                return [.walkCancelled(WalkUpdate(walkID: walk.walkID, from: walk.from, to: walk.to, at: now))]
            }

        case .expire:
            // The job may run early, late or twice: only a pending walk past its deadline expires.
            guard let walk = state.request, state.status == .pending, now >= walk.expiresAt else { return [] }
            // Stamped with the deadline, not the job's clock, so the fact does not depend on the job.
            return [.walkExpired(WalkUpdate(walkID: walk.walkID, from: walk.from, to: walk.to, at: walk.expiresAt))]

        case .erase(let user):
            // Only a walk still waiting for its answer is withdrawn; answered, cancelled or past
            // its deadline, it is settled already.
            guard let walk = state.request, state.status == .pending, walk.from == user || walk.to == user, now < walk.expiresAt
            else { return [] }
            return [.walkCancelled(WalkUpdate(walkID: walk.walkID, from: walk.from, to: walk.to, at: now))]
        }
    }
}
