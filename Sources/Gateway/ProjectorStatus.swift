import Foundation
import EventLog

/// Where one projector stands, for `/v1/admin/projections` and `/metrics`.
public struct ProjectorStatus: Sendable, Equatable {
    /// The projector's name (its checkpoint row).
    public var name: String
    /// The last feed position it has applied.
    public var checkpoint: LogPosition
    /// When it last wrote its checkpoint.
    public var updatedAt: Date?
    /// Readable events after its checkpoint.
    public var lagEvents: Int
    /// Age of the oldest event it has not applied yet (0 when caught up).
    public var lagSeconds: Double
    /// `caught_up`, `catching_up` or `not_started`.
    public var state: String

    public init(name: String, checkpoint: LogPosition, updatedAt: Date?, lagEvents: Int, lagSeconds: Double, state: String) {
        self.name = name
        self.checkpoint = checkpoint
        self.updatedAt = updatedAt
        self.lagEvents = lagEvents
        self.lagSeconds = lagSeconds
        self.state = state
    }
}
