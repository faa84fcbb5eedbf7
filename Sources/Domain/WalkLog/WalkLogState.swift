import Foundation

/// What a `walklog-<uuid>` stream knows.
public struct WalkLogState: Sendable, Equatable {
    /// The log as recorded; `nil` while the stream is empty.
    public var logged: WalkLogged?
    public var visibility: WalkLogVisibility?
    public var deleted: Bool

    public init(logged: WalkLogged? = nil, visibility: WalkLogVisibility? = nil, deleted: Bool = false) {
        self.logged = logged
        self.visibility = visibility
        self.deleted = deleted
    }

    public static let initial = WalkLogState()

    public var exists: Bool { logged != nil }
    public var owner: UUID? { logged?.owner }
    /// Recorded and not deleted.
    public var isLive: Bool { exists && !deleted }
}

extension WalkLogState: StreamKindState {
    public static func extract(from state: StreamState) -> WalkLogState? { state.walkLog }
    public var embedded: StreamState { .walkLog(self) }
}
