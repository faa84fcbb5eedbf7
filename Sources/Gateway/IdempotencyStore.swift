import Crypto
import Foundation
import Postgres

/// The first answer to each (caller, `Idempotency-Key`), so that a retried POST gets it again.
///
/// A stored answer is only a shortcut: the command id given to the command handler is derived
/// from the same (caller, key), so even a retry that races the first attempt, or comes after a
/// crash between the append and the store, writes nothing twice.
public struct IdempotencyStore: Sendable {
    /// An answer as stored.
    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var logPosition: String?
        public var body: String
    }

    let pool: ConnectionPool
    let gate: DatabaseGate

    public init(pool: ConnectionPool, gate: DatabaseGate) {
        self.pool = pool
        self.gate = gate
    }

    /// The scope of requests that have no caller yet (sign-up).
    public static let anonymous = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// 1–200 visible ASCII characters, as API.md says.
    public static func isValidKey(_ key: String) -> Bool {
        (1...200).contains(key.utf8.count) && key.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7e }
    }

    /// The command id for (scope, key): stable across retries, different for every caller.
    public static func commandID(scope: UUID, key: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data("sniffmeet-idempotency:\(scope.uuidString.lowercased()):\(key)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0f) | 0x80  // version 8 (custom)
        bytes[8] = (bytes[8] & 0x3f) | 0x80  // RFC 9562 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// Fingerprint of a request: method, path and body bytes.
    public static func requestHash(method: String, path: String, body: Data) -> String {
        var hasher = SHA256()
        hasher.update(data: Data("\(method) \(path)\n".utf8))
        hasher.update(data: body)
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// What was stored for (scope, key): the answer and the fingerprint of its request.
    public func lookup(scope: UUID, key: String) async throws -> (requestHash: String, answer: Answer)? {
        try await gate.withConnection(pool) { connection in
            guard let row = try connection.execute(
                "SELECT request_hash, status, log_position, body FROM idempotency_keys WHERE scope = $1 AND key = $2",
                [scope, key]).first else { return nil }
            return (try row.string(0), Answer(status: try row.int(1), logPosition: row.optionalString(2), body: try row.string(3)))
        }
    }

    /// Stores the first answer; when another request stored one first, returns that one instead.
    public func store(scope: UUID, key: String, requestHash: String, answer: Answer) async throws -> (requestHash: String, answer: Answer) {
        try await gate.withConnection(pool) { connection in
            let inserted = try connection.execute("""
                INSERT INTO idempotency_keys (scope, key, request_hash, status, log_position, body)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (scope, key) DO NOTHING
                """, [scope, key, requestHash, answer.status, answer.logPosition, answer.body])
            if inserted.affectedRows == 1 { return (requestHash, answer) }
            // A concurrent request with the same key stored first. A new statement takes a new
            // snapshot, so its committed row is visible now (the INSERT waited for it).
            guard let row = try connection.execute(
                "SELECT request_hash, status, log_position, body FROM idempotency_keys WHERE scope = $1 AND key = $2",
                [scope, key]).first else {
                throw APIError(.conflict, "idempotency_key_in_use", "A request with this Idempotency-Key is still running; retry.",
                               headers: ["Retry-After": "1"])
            }
            return (try row.string(0), Answer(status: try row.int(1), logPosition: row.optionalString(2), body: try row.string(3)))
        }
    }
}
