import Foundation

/// Where a walk request stands (the `status` of the API).
public enum WalkStatus: String, Sendable, Equatable, CaseIterable {
    case pending, accepted, declined, cancelled, expired
}

/// The addressee's answer to a walk request.
public enum WalkAnswer: String, Sendable, Equatable, CaseIterable {
    case accept, decline
}

/// What a `walk-<uuid>` stream knows.
public struct WalkState: Sendable, Equatable {
    /// The request as sent; `nil` while the stream is empty.
    public var request: WalkRequested?
    /// `nil` while the stream is empty.
    public var status: WalkStatus?
    /// When it was accepted, declined or cancelled.
    public var answeredAt: Date?

    public init(request: WalkRequested? = nil, status: WalkStatus? = nil, answeredAt: Date? = nil) {
        self.request = request
        self.status = status
        self.answeredAt = answeredAt
    }

    /// A stream with no events: no such walk.
    public static let initial = WalkState()

    public var exists: Bool { request != nil }
    /// The sender.
    public var from: UUID? { request?.from }
    /// The addressee.
    public var to: UUID? { request?.to }
    public var expiresAt: Date? { request?.expiresAt }

    /// The answer given, if the walk was accepted or declined.
    public var answer: WalkAnswer? {
        switch status {
        case .accepted: .accept
        case .declined: .decline
        default: nil
        }
    }
}
