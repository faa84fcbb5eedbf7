import Foundation

/// What a `nickname-<lowercased>` stream knows: who holds the nickname, if anyone.
public struct NicknameState: Sendable, Equatable {
    /// The user holding the nickname; `nil` when it is free (never taken, or released).
    public var holder: UUID?

    public init(holder: UUID? = nil) {
        self.holder = holder
    }

    /// A stream with no events: the nickname is free.
    public static let initial = NicknameState()
}
