import Crypto
import Foundation
import Postgres
import Synchronization

/// Bearer tokens: 256 random bits, given to the client once, kept only as their SHA-256.
public struct TokenStore: Sendable {
    let pool: ConnectionPool
    let gate: DatabaseGate
    /// Recently seen token hashes and their users. Tokens are never revoked (the API has no
    /// logout), so a cached answer cannot go stale; the cache only saves a round trip per request.
    let cache = TokenCache(capacity: 10_000)

    public init(pool: ConnectionPool, gate: DatabaseGate) {
        self.pool = pool
        self.gate = gate
    }

    /// Lowercase hex SHA-256 of the token text (stored as its 32 bytes).
    public static func hash(_ token: String) -> String {
        Hex.string(SHA256.hash(data: Data(token.utf8)))
    }

    /// Stores a token for `user` on `connection` (inside the sign-up's transaction).
    public static func store(_ token: String, for user: UUID, on connection: Connection) throws {
        try connection.execute("INSERT INTO auth_tokens (token_hash, user_id) VALUES (decode($1, 'hex'), $2)", [hash(token), user])
    }

    /// Deletes every token of `user` on `connection` (inside the account deletion's transaction).
    public static func revokeAll(of user: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM auth_tokens WHERE user_id = $1", [user])
    }

    /// Drops `user`'s cached tokens in this process.
    public func forget(_ user: UUID) { cache.forget(user) }

    /// The user a token belongs to, or `nil`.
    ///
    /// The row is found by the hash (an index lookup that reveals nothing about the token), and
    /// the stored hash is compared again in constant time, so no timing difference depends on
    /// how much of a guess was right.
    public func user(for token: String) async throws -> UUID? {
        // A token is 43 characters; anything far off is not worth a database round trip.
        guard (20...100).contains(token.utf8.count) else { return nil }
        let digest = Self.hash(token)
        if let cached = cache.user(for: digest) { return cached }
        let found = try await gate.withConnection(pool) { connection -> (String, UUID)? in
            guard
                let row = try connection.execute(
                    "SELECT encode(token_hash, 'hex'), user_id FROM auth_tokens WHERE token_hash = decode($1, 'hex')",
                    [digest]
                ).first
            else { return nil }
            return (try row.string(0), try row.uuid(1))
        }
        guard let (stored, user) = found, Self.constantTimeEqual(Array(stored.utf8), Array(digest.utf8)) else { return nil }
        cache.remember(digest, user)
        return user
    }

    /// Compares without an early exit.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
