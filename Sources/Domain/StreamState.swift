import Foundation

/// The folded state of one stream, whichever kind it is.
///
/// Indirect: a state is copied out of caches and maps several times per command, and a copy of
/// an inline payload retained each of its strings, sets and dictionaries (a user's profile alone
/// has five); a boxed one is retained once. A walk request's retains fell by about a tenth.
public indirect enum StreamState: Sendable, Equatable {
    case user(UserState)
    case nickname(NicknameState)
    case mates(MatesState)
    case walk(WalkState)
    case walkLog(WalkLogState)
    case chat(ChatState)

    public var user: UserState? { if case .user(let s) = self { s } else { nil } }
    public var nickname: NicknameState? { if case .nickname(let s) = self { s } else { nil } }
    public var mates: MatesState? { if case .mates(let s) = self { s } else { nil } }
    public var walk: WalkState? { if case .walk(let s) = self { s } else { nil } }
    public var walkLog: WalkLogState? { if case .walkLog(let s) = self { s } else { nil } }
    public var chat: ChatState? { if case .chat(let s) = self { s } else { nil } }
}

/// The state of one stream kind, as one case of `StreamState`: how a decider's state goes in
/// and comes out, so `SniffMeet` can run any decider on the states the handler loaded.
public protocol StreamKindState: Sendable, Equatable {
    /// This state's case of `StreamState`, or `nil` for another kind.
    static func extract(from state: StreamState) -> Self?
    /// This state as a `StreamState`.
    var embedded: StreamState { get }
}

extension UserState: StreamKindState {
    public static func extract(from state: StreamState) -> UserState? { state.user }
    public var embedded: StreamState { .user(self) }
}

extension NicknameState: StreamKindState {
    public static func extract(from state: StreamState) -> NicknameState? { state.nickname }
    public var embedded: StreamState { .nickname(self) }
}

extension MatesState: StreamKindState {
    public static func extract(from state: StreamState) -> MatesState? { state.mates }
    public var embedded: StreamState { .mates(self) }
}

extension WalkState: StreamKindState {
    public static func extract(from state: StreamState) -> WalkState? { state.walk }
    public var embedded: StreamState { .walk(self) }
}
