import EventLog
import Foundation

/// Where one projector stands, for `/metrics` and `GET /v1/admin/projections`.
public struct ProjectorStatus: Sendable, Codable, Equatable {
    /// What this process is doing with the projector.
    public enum State: String, Sendable, Codable {
        /// Not started here (or the runner was stopped).
        case stopped
        /// Another process owns it; this one waits to take over.
        case standby
        /// Owned here; reading full batches towards the head.
        case catchingUp = "catching_up"
        /// Owned here and at the head, following new events.
        case live
        /// Owned here but the last attempt failed; it retries.
        case failed
    }

    public var name: String
    public var state: State
    /// The stored checkpoint (whoever owns the projector).
    public var checkpoint: LogPosition
    /// Committed events after the checkpoint.
    public var lagEvents: Int64
    /// Age of the oldest event not yet applied; 0 when caught up.
    public var lagSeconds: Double
    /// When the checkpoint last moved.
    public var updatedAt: Date?
    /// The last error, while `state` is `failed`.
    public var lastError: String?
}
