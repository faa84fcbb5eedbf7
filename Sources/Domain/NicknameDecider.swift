import Foundation

/// The decider of a `nickname-<key>` stream (`FreeText.nicknameKey`): it makes nicknames unique
/// ignoring case and spelling, because two users can only both hold "Rex" and "ｒｅｘ" by writing the same stream, and the
/// log's optimistic concurrency lets only one of them win.
public enum NicknameDecider: Decider {
    public enum Command: Sendable, Equatable {
        /// `user` wants the nickname.
        case reserve(nickname: String, user: UUID)
        /// `user` gives the nickname up (on changing it).
        case release(nickname: String, user: UUID)
    }

    public static let initial = NicknameState.initial

    public static func evolve(_ state: NicknameState, _ event: Event) -> NicknameState {
        switch event {
        case .nicknameReserved(let e): NicknameState(holder: e.userID)
        case .nicknameReleased: NicknameState(holder: nil)
        default: state
        }
    }

    public static func decide(_ command: Command, _ state: NicknameState, context: DecisionContext) throws(DomainError) -> [Event] {
        let now = context.now
        switch command {
        case .reserve(let nickname, let user):
            switch state.holder {
            case nil: return [.nicknameReserved(NicknameClaim(nickname: FreeText.nicknameKey(nickname), userID: user, at: now))]
            case user: return []  // already mine
            default: throw .nicknameTaken
            }
        case .release(let nickname, let user):
            // Only the holder's release means anything; anyone else has nothing to give up.
            guard state.holder == user else { return [] }
            return [.nicknameReleased(NicknameClaim(nickname: FreeText.nicknameKey(nickname), userID: user, at: now))]
        }
    }
}
