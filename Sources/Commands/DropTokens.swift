import Crypto
import Domain
import Foundation
import Postgres

/// Drop tokens: what one phone hands another in person so that a mate request can follow.
///
/// Stored in a plain table, not the log (see schema/0002): they are short-lived secrets, and
/// only their SHA-256 is kept. The token itself is a `SecretToken`.
enum DropTokens {
    static func hash(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }

    static func store(hash: Data, user: UUID, expiresAt: Date, on connection: Connection) throws {
        try connection.execute("INSERT INTO drop_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, $3)", [hash, user, expiresAt])
    }

    /// The presented token as the domain sees it, locked until the transaction ends so two
    /// requests cannot both spend it.
    static func presented(hash: Data, on connection: Connection) throws -> PresentedDropToken? {
        let result = try connection.execute(
            "SELECT user_id, expires_at, used_at IS NOT NULL FROM drop_tokens WHERE token_hash = $1 FOR UPDATE",
            [hash]
        )
        guard let row = result.first else { return nil }
        return PresentedDropToken(issuedBy: try row.uuid(0), expiresAt: try row.date(1), used: try row.bool(2))
    }

    static func spend(hash: Data, on connection: Connection) throws {
        try connection.execute("UPDATE drop_tokens SET used_at = now() WHERE token_hash = $1", [hash])
    }

    /// Forgets every token `user` handed out (their account is being deleted).
    static func deleteAll(of user: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM drop_tokens WHERE user_id = $1", [user])
    }

    /// Forgets tokens that expired a while ago.
    static func purgeExpired(on connection: Connection) throws -> Int {
        try connection.execute("DELETE FROM drop_tokens WHERE expires_at < now() - interval '1 hour'").affectedRows
    }
}
