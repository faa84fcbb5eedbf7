import Foundation

/// The outside facts a decision may depend on, passed in as values so decisions never read a clock.
public struct DecisionContext: Sendable, Equatable {
    /// The current time (rounded to milliseconds by `decide`, the precision of the log).
    public var now: Date
    /// How long a walk request stays answerable (`SNIFFMEET_WALK_TTL_SECONDS`, default 60).
    public var walkTTL: TimeInterval

    public init(now: Date, walkTTL: TimeInterval = WalkDecider.defaultTTL) {
        self.now = now
        self.walkTTL = walkTTL
    }
}
