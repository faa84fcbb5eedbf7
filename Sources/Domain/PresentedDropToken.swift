import Foundation

/// What the command handler found for the drop token a requester presented.
///
/// A drop token is handed over in person (it travels on the profile card during a profile drop);
/// it lets its holder send one mate request to the user who issued it. `nil` in place of this
/// value means no such token exists.
public struct PresentedDropToken: Sendable, Equatable {
    /// The user who handed the token out (the only user it lets you ask).
    public var issuedBy: UUID
    /// When it stops being valid.
    public var expiresAt: Date
    /// Whether a mate request already consumed it.
    public var used: Bool

    public init(issuedBy: UUID, expiresAt: Date, used: Bool) {
        self.issuedBy = issuedBy
        self.expiresAt = expiresAt
        self.used = used
    }

    /// Drop tokens live 5 minutes and are single-use.
    public static let dropTokenLifetime: TimeInterval = 300
}
