import Crypto
import Foundation
import Postgres

/// The first answer to each (caller, `Idempotency-Key`), so that a retried POST gets it again.
///
/// Answers can carry secrets (a sign-up's bearer token, a drop token), so the key is stored only
/// as its SHA-256 and the body only sealed with AES-GCM under a key derived (HKDF) from the
/// Idempotency-Key and the caller: reading the table does not reveal a token.
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
        return hex(hasher.finalize())
    }

    /// What was stored for (scope, key): the answer and the fingerprint of its request.
    public func lookup(scope: UUID, key: String) async throws -> (requestHash: String, answer: Answer)? {
        let keyHash = hex(SHA256.hash(data: Data(key.utf8)))
        let row = try await gate.withConnection(pool) { connection -> (String, Int, String?, Data)? in
            guard let row = try connection.execute("""
                SELECT encode(request_hash, 'hex'), status, log_position, encode(sealed_body, 'base64')
                FROM idempotency_keys WHERE scope = $1 AND key_hash = decode($2, 'hex')
                """, [scope, keyHash]).first else { return nil }
            return (try row.string(0), try row.int(1), row.optionalString(2),
                    Data(base64Encoded: try row.string(3), options: .ignoreUnknownCharacters) ?? Data())
        }
        guard let (requestHash, status, logPosition, sealed) = row else { return nil }
        return (requestHash, Answer(status: status, logPosition: logPosition, body: try Self.open(sealed, scope: scope, key: key)))
    }

    /// Stores the first answer; when another request stored one first, returns that one instead.
    public func store(scope: UUID, key: String, requestHash: String, answer: Answer) async throws -> (requestHash: String, answer: Answer) {
        let keyHash = hex(SHA256.hash(data: Data(key.utf8)))
        let sealed = try Self.seal(answer.body, scope: scope, key: key).base64EncodedString()
        let inserted = try await gate.withConnection(pool) { connection -> Bool in
            try connection.execute("""
                INSERT INTO idempotency_keys (scope, key_hash, request_hash, status, log_position, sealed_body)
                VALUES ($1, decode($2, 'hex'), decode($3, 'hex'), $4, $5, decode($6, 'base64'))
                ON CONFLICT (scope, key_hash) DO NOTHING
                """, [scope, keyHash, requestHash, answer.status, answer.logPosition, sealed]).affectedRows == 1
        }
        if inserted { return (requestHash, answer) }
        // A concurrent request with the same key stored first. A new statement takes a new
        // snapshot, so its committed row is visible now (the INSERT waited for it).
        guard let first = try await lookup(scope: scope, key: key) else {
            throw APIError(.conflict, "idempotency_key_in_use", "A request with this Idempotency-Key is still running; retry.",
                           headers: ["Retry-After": "1"])
        }
        return first
    }

    // MARK: Sealing

    static func sealingKey(scope: UUID, key: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: Data(key.utf8)),
                               salt: Data(scope.uuidString.lowercased().utf8),
                               info: Data("sniffmeet idempotent answer".utf8), outputByteCount: 32)
    }

    static func seal(_ body: String, scope: UUID, key: String) throws -> Data {
        guard let combined = try AES.GCM.seal(Data(body.utf8), using: sealingKey(scope: scope, key: key)).combined else {
            throw APIError.internalError
        }
        return combined
    }

    static func open(_ sealed: Data, scope: UUID, key: String) throws -> String {
        let box = try AES.GCM.SealedBox(combined: sealed)
        return String(decoding: try AES.GCM.open(box, using: sealingKey(scope: scope, key: key)), as: UTF8.self)
    }
}
