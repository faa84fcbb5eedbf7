import Foundation

/// What a `mates-<lo>-<hi>` stream knows: where the relationship of the two users stands,
/// and every mate request ever made between them.
public struct MatesState: Sendable, Equatable {
    /// Where the relationship stands. At most one request is pending per pair.
    public enum Status: Sendable, Equatable {
        /// Not mates and nothing pending (initial, or after decline, cancel, unpair).
        case none
        /// `from` asked `to`; waiting for an answer.
        case pending(requestID: UUID, from: UUID, to: UUID)
        /// Mates since the acceptance.
        case mates(since: Date)
    }

    /// Where one mate request ended up (the `status` of the API).
    public enum RequestStatus: String, Sendable, Equatable {
        case pending, accepted, declined, cancelled
    }

    /// One mate request of this pair.
    public struct Request: Sendable, Equatable {
        public var requestID: UUID
        public var from: UUID
        public var to: UUID
        public var status: RequestStatus
        public var createdAt: Date
        public var updatedAt: Date

        public init(requestID: UUID, from: UUID, to: UUID, status: RequestStatus, createdAt: Date, updatedAt: Date) {
            self.requestID = requestID
            self.from = from
            self.to = to
            self.status = status
            self.createdAt = createdAt
            self.updatedAt = updatedAt
        }
    }

    public var status: Status
    /// Every request of the pair by id, whatever its outcome.
    public var requests: [UUID: Request]
    /// Which of the two blocked the other (both may have).
    public var blockedBy: Set<UUID>

    public init(status: Status = .none, requests: [UUID: Request] = [:], blockedBy: Set<UUID> = []) {
        self.status = status
        self.requests = requests
        self.blockedBy = blockedBy
    }

    /// Either blocked the other: no requests, no walks.
    public var isBlocked: Bool { !blockedBy.isEmpty }

    /// The two ever had a mate request (so they have met): what a report needs.
    public var haveMet: Bool { !requests.isEmpty }

    /// A stream with no events: strangers.
    public static let initial = MatesState()

    public var areMates: Bool {
        if case .mates = status { return true }
        return false
    }

    /// The ids of all requests seen on this pair.
    public var requestIDs: Set<UUID> { Set(requests.keys) }

    /// The pending request's id, if one is pending.
    public var pendingRequestID: UUID? {
        if case .pending(let id, _, _) = status { return id }
        return nil
    }
}
