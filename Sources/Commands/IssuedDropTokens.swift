import Domain
import Foundation
import PersonalData
import Synchronization

/// The drop tokens this process handed out and has not seen spent, by hash: who issued each and
/// when it expires, facts that never change once the token is stored.
///
/// A mate request presenting one of them is decided without reading the token first (its round
/// trip was the one a mate request paid beyond a walk's). That decision is only ever an
/// acceptance: its append spends the token in the same transaction (`DropTokens.spending`,
/// which checks the issuer and expiry it was decided on), and a token spent, deleted or changed
/// since (by another process, or with its issuer's account: a deletion leaves its tokens here,
/// to be found gone) fails that transaction, so the command runs again on the token as read from
/// the database. A refusal is never given on this memory alone: the handler reads the token then.
final class IssuedDropTokens: Sendable {
    private let tokens: Mutex<GenerationalMap<Key, PresentedDropToken>>

    /// `capacity`: tokens per generation. Tokens live five minutes, and a burst of sign-ups
    /// hands out tens of thousands in one (`scripts/bench-http` issues about 70,000 before its
    /// mate requests use them, oldest first); at about 80 bytes an entry, the default's two
    /// generations hold the last 100,000–200,000 in at most 16 MB. A token dropped is only read.
    init(capacity: Int = 100_000) {
        tokens = Mutex(GenerationalMap(capacity: capacity))
    }

    /// Remembers a token just stored.
    func issued(hash: Data, by user: UUID, expiresAt: Date) {
        guard let key = Key(sha256: hash) else { return }
        let token = PresentedDropToken(issuedBy: user, expiresAt: expiresAt, used: false)
        tokens.withLock { $0.set(token, for: key) }
    }

    /// The token as it was issued, if this process issued it and has not seen it spent.
    func token(hash: Data) -> PresentedDropToken? {
        guard let key = Key(sha256: hash) else { return nil }
        return tokens.withLock { $0.peek(key) }
    }

    /// Forgets a token spent here.
    func spent(hash: Data) {
        guard let key = Key(sha256: hash) else { return }
        tokens.withLock { $0.removeValue(for: key) }
    }

    /// A token's SHA-256 held inline (a `Data` of 32 bytes is an allocation of its own).
    private typealias Key = SIMD4<UInt64>
}

extension SIMD4<UInt64> {
    /// The 32 bytes of a SHA-256; nil for anything else.
    fileprivate init?(sha256 hash: Data) {
        guard hash.count == 32 else { return nil }
        self.init()
        withUnsafeMutableBytes(of: &self) { _ = hash.copyBytes(to: $0) }
    }
}
