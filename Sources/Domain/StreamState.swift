import Foundation

/// The folded state of one stream, whichever kind it is.
public enum StreamState: Sendable, Equatable {
    case user(UserState)
    case nickname(NicknameState)
    case mates(MatesState)
    case walk(WalkState)

    public var user: UserState? { if case .user(let s) = self { s } else { nil } }
    public var nickname: NicknameState? { if case .nickname(let s) = self { s } else { nil } }
    public var mates: MatesState? { if case .mates(let s) = self { s } else { nil } }
    public var walk: WalkState? { if case .walk(let s) = self { s } else { nil } }
}
