import Domain
import Foundation
import PersonalData
import Synchronization

/// The drop tokens this process handed out and has not seen spent, by hash: who issued each and
/// when it expires, facts that never change once the token is stored.
///
/// A mate request presenting one of them is decided without reading the token first (its round
/// trip was the one a mate request paid beyond a walk's). That decision is only ever an
/// acceptance: its append spends the token in the same transaction (`DropTokens.spending`),
/// and a token spent or deleted since (by another process, or with its issuer's account) fails
/// that transaction, so the command runs again on the token as read from the database. A
/// refusal is never given on this memory alone: the handler reads the token then.
final class IssuedDropTokens: Sendable {
    private let tokens: Mutex<GenerationalMap<Data, PresentedDropToken>>

    /// `capacity`: tokens per generation (tokens live five minutes; a dropped one is only read).
    init(capacity: Int = 20_000) {
        tokens = Mutex(GenerationalMap(capacity: capacity))
    }

    /// Remembers a token just stored.
    func issued(hash: Data, by user: UUID, expiresAt: Date) {
        let token = PresentedDropToken(issuedBy: user, expiresAt: expiresAt, used: false)
        tokens.withLock { $0.set(token, for: hash) }
    }

    /// The token as it was issued, if this process issued it and has not seen it spent.
    func token(hash: Data) -> PresentedDropToken? {
        tokens.withLock { $0.peek(hash) }
    }

    /// Forgets a token spent (or refused) here.
    func spent(hash: Data) {
        tokens.withLock { $0.removeValue(for: hash) }
    }

    /// Forgets every token `user` issued (their account is gone, and its tokens with it).
    func forgetAll(of user: UUID) {
        tokens.withLock { $0.filter { $0.issuedBy != user } }
    }
}
