@preconcurrency import Crypto
import EventLog
import Foundation
import PersonalData
import Postgres
import UUIDText

/// The first answer to each (caller, `Idempotency-Key`), so that a retried POST gets it again,
/// for 24 hours.
///
/// Answers can carry secrets (a drop token), so nothing in the table is readable without the
/// server's key: the key column is an HMAC of (caller, key) under a key derived from the server
/// secret, and the body is sealed with AES-GCM under another derived key, bound to its row.
/// Answers that hand out a bearer token are never stored at all (see `IdempotencyMiddleware`): their
/// repeat is `409 already_registered`.
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

    /// How long an answer is kept; older ones are neither served nor kept (`purge`).
    public static let retention: Duration = .seconds(24 * 3600)

    let pool: ConnectionPool
    let gate: DatabaseGate
    private let keyMAC: SymmetricKey
    private let sealing: SymmetricKey
    private let anonymousMAC: SymmetricKey

    /// `secret` is the server's secret (`ServerSecret`); the store derives its own keys from it.
    public init(pool: ConnectionPool, gate: DatabaseGate, secret: SymmetricKey) {
        self.pool = pool
        self.gate = gate
        self.keyMAC = ServerSecret.derive(secret, purpose: "idempotency key")
        self.sealing = ServerSecret.derive(secret, purpose: "idempotency answer")
        self.anonymousMAC = ServerSecret.derive(secret, purpose: "idempotency anonymous scope")
    }

    /// The one scope all requests without a caller shared before `anonymousScope`; kept because
    /// command ids derived from it are in logs.
    public static let anonymous = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    /// The scope of one anonymous request (sign-up, sign-in with a transfer code): the client's
    /// address together with the request's fingerprint (`requestHash`: method, path, body).
    ///
    /// Keys come from apps, and nothing stops two apps from choosing the same one, so a scope
    /// shared by all anonymous callers (`anonymous`) let one client's key replay, or refuse with
    /// `422`, another's sign-up. The address is the TCP peer (or our proxy's last hop), which a
    /// client cannot choose to be someone else's; the fingerprint keeps apart two phones behind
    /// one address (carrier NAT) that pick the same key, as their sign-ups differ in body. A
    /// retry from the same address with the same request is the same sign-up, and is refused with
    /// `409 already_registered`; one from another network is a new attempt, which the nickname it
    /// already took refuses. An HMAC under the server secret, because the scope is stored in the
    /// clear and a plain hash of an address and a profile could be matched against guesses.
    public func anonymousScope(client: String, requestHash: String) -> UUID {
        var mac = HMAC<SHA256>(key: anonymousMAC)
        mac.update(data: Data(client.utf8))
        mac.update(data: [0])
        mac.update(data: Data(requestHash.utf8))
        return EventLog.derivedUUID(Array(mac.finalize()))
    }
    /// The scope of the operators' commands (admin token).
    public static let operators = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))

    /// 1–200 visible ASCII characters, as API.md says.
    public static func isValidKey(_ key: String) -> Bool {
        (1...200).contains(key.utf8.count) && key.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7e }
    }

    /// The command id for (scope, key): stable across retries, different for every caller.
    /// Logs hold events whose ids derive from these, so the input text never changes.
    public static func commandID(scope: UUID, key: String) -> UUID {
        EventLog.derivedUUID(Array("sniffmeet-idempotency:\(scope.lowercasedString):\(key)".utf8))
    }

    /// Fingerprint of a request: method, path and body bytes.
    public static func requestHash(method: String, path: String, body: Data) -> String {
        var hasher = SHA256()
        hasher.update(data: Data("\(method) \(path)\n".utf8))
        hasher.update(data: body)
        return Hex.string(hasher.finalize())
    }

    /// The stored name of (scope, key): an HMAC, so a dump of the table cannot be matched
    /// against guessed keys without the server secret.
    func keyHash(scope: UUID, key: String) -> Data {
        var mac = HMAC<SHA256>(key: keyMAC)
        mac.update(data: Data(scope.lowercasedString.utf8))
        mac.update(data: [0])
        mac.update(data: Data(key.utf8))
        return Data(mac.finalize())
    }

    static let lookupSQL = """
        SELECT encode(request_hash, 'hex'), status, log_position, encode(sealed_body, 'base64')
        FROM idempotency_keys
        WHERE scope = $1 AND key_hash = decode($2, 'hex') AND created_at > now() - make_interval(secs => $3)
        """

    /// What was stored for (scope, key) in the last 24 hours: the answer and the fingerprint of its request.
    public func lookup(scope: UUID, key: String) async throws -> (requestHash: String, answer: Answer)? {
        let keyHash = keyHash(scope: scope, key: key)
        let row = try await gate.withConnection(pool) { connection -> (String, Int, String?, Data)? in
            guard
                let row = try connection.execute(
                    Self.lookupSQL,
                    [scope, Hex.string(keyHash), Self.retention.components.seconds],
                    prepared: true
                ).first
            else { return nil }
            return (
                try row.string(0), try row.int(1), row.optionalString(2),
                Data(base64Encoded: try row.string(3), options: .ignoreUnknownCharacters) ?? Data()
            )
        }
        guard let (requestHash, status, logPosition, sealed) = row else { return nil }
        // A row sealed under another secret (the secret was replaced) is as good as absent.
        guard let body = try? open(sealed, keyHash: keyHash) else { return nil }
        return (requestHash, Answer(status: status, logPosition: logPosition, body: body))
    }

    /// Replaces an expired row for the same key (it is no longer an answer) but never a live one.
    /// An answer showing a message already unsent (its key destroyed), or given to an account
    /// deleted meanwhile (its data key destroyed: the deletion's own answer, or a request that
    /// raced it), is not stored: the unsend or deletion removed the answers it found, and this
    /// one came too late to be among them.
    static let storeSQL = """
        INSERT INTO idempotency_keys (scope, key_hash, request_hash, status, log_position, sealed_body, erase_with)
        SELECT $1, decode($2, 'hex'), decode($3, 'hex'), $4, $5, decode($6, 'base64'), $8::uuid
        WHERE ($8::uuid IS NULL OR NOT EXISTS (SELECT 1 FROM message_keys WHERE message_id = $8::uuid AND sealed_key IS NULL))
          AND NOT EXISTS (SELECT 1 FROM data_keys WHERE user_id = $1 AND sealed_key IS NULL)
        ON CONFLICT (scope, key_hash) DO UPDATE
            SET request_hash = excluded.request_hash, status = excluded.status, log_position = excluded.log_position,
                sealed_body = excluded.sealed_body, created_at = excluded.created_at, erase_with = excluded.erase_with
            WHERE idempotency_keys.created_at <= now() - make_interval(secs => $7)
        """

    /// Stores the first answer; when another request stored one first, returns that one instead.
    /// `erasedWith` names the chat message the answer shows (`eraseAnswers(of:)`).
    public func store(
        scope: UUID,
        key: String,
        requestHash: String,
        answer: Answer,
        erasedWith: UUID? = nil
    ) async throws -> (requestHash: String, answer: Answer) {
        let keyHash = keyHash(scope: scope, key: key)
        let sealed = try seal(answer.body, keyHash: keyHash).base64EncodedString()
        let inserted = try await gate.withConnection(pool) { connection -> Bool in
            try connection.execute(
                Self.storeSQL,
                [
                    scope, Hex.string(keyHash), requestHash, answer.status, answer.logPosition, sealed,
                    Self.retention.components.seconds, erasedWith,
                ],
                prepared: true
            ).affectedRows == 1
        }
        if inserted { return (requestHash, answer) }
        // A concurrent request with the same key stored first. A new statement takes a new
        // snapshot, so its committed row is visible now (the INSERT waited for it).
        if let first = try await lookup(scope: scope, key: key) { return first }
        // Not stored because the message was unsent or the account deleted meanwhile: nothing
        // to hand out but this one.
        if erasedWith != nil { return (requestHash, answer) }
        let accountErased = try await gate.withConnection(pool) { connection in
            try connection.execute("SELECT 1 FROM data_keys WHERE user_id = $1 AND sealed_key IS NULL", [scope]).count > 0
        }
        guard accountErased else {
            throw APIError(
                .conflict,
                "idempotency_key_in_use",
                "A request with this Idempotency-Key is still running; retry.",
                headers: ["Retry-After": "1"]
            )
        }
        return (requestHash, answer)
    }

    /// Deletes answers older than `retention`; returns how many.
    public func purge() async throws -> Int {
        try await pool.withConnection { connection in
            try connection.execute(
                "DELETE FROM idempotency_keys WHERE created_at <= now() - make_interval(secs => $1)",
                [Self.retention.components.seconds]
            ).affectedRows
        }
    }

    // MARK: Sealing

    /// AES-GCM under the store's key, with the row's key hash as associated data: a sealed body
    /// moved to another row does not open.
    func seal(_ body: String, keyHash: Data) throws -> Data {
        guard let combined = try AES.GCM.seal(Data(body.utf8), using: sealing, nonce: .fresh(), authenticating: keyHash).combined else {
            throw APIError.unexpected
        }
        return combined
    }

    func open(_ sealed: Data, keyHash: Data) throws -> String {
        let box = try AES.GCM.SealedBox(combined: sealed)
        return String(decoding: try AES.GCM.open(box, using: sealing, authenticating: keyHash), as: UTF8.self)
    }

    /// Deletes every stored answer showing `message` (its send, its edits) on `connection`, in
    /// the transaction that unsends it.
    public static func eraseAnswers(of message: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM idempotency_keys WHERE erase_with = $1", [message])
    }

    /// Deletes every stored answer of `user` on `connection` (their account is being deleted:
    /// the answers may show their data).
    static func forget(_ user: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM idempotency_keys WHERE scope = $1", [user])
    }

}
