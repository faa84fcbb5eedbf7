import Commands
@preconcurrency import Crypto
import Domain
import EventLog
import Foundation
import PersonalData
import Postgres
import Projections
import UUIDText

/// Who is asking: the user and the session (device) whose bearer token came with the request.
public struct Caller: Sendable, Equatable {
    public var user: UUID
    public var session: UUID
}

/// Sessions (DESIGN.md, "Sessions"): one per device, each a bearer token of 256 random bits,
/// given to the client once and kept only as its SHA-256 (`sessions`, schema 0011); with the
/// device's push token and locale. And transfer codes, which sign the same account in on
/// another phone.
///
/// Revocation reaches every process within a second: a signed-out session's hash is announced
/// with `NOTIFY sniffmeet_sessions` in the transaction that deletes it, and every process
/// listening forgets its cached sessions at once (`ListenerService`); a cached session is
/// trusted for at most a second unless the listener has shown within the last second that no
/// announcement is still on its way (`SessionCache`).
public struct SessionStore: Sendable {
    /// The NOTIFY channel of revocations (payload: the token hash in hex).
    public static let revocations = "sniffmeet_sessions"
    /// Transfer codes live 10 minutes.
    public static let transferCodeLifetime: TimeInterval = 600
    /// Sessions a process keeps in memory by default (`SNIFFMEET_CACHED_SESSIONS`): a sign-up
    /// flood of 100,000 users in a minute still finds the first of them cached when they answer
    /// their first mate requests (`scripts/bench-http` signs up that many per round). Just under
    /// two tables of 2^18 entries, three quarters full (`SessionCache`).
    public static let defaultCachedSessions = 390_000
    /// `last_seen_at` moves at most this often (the API shows it to the minute).
    static let lastSeenStep: TimeInterval = 60

    let pool: ConnectionPool
    let gate: DatabaseGate
    let cache: SessionCache
    /// Where `last_seen_at` moves wait to be written.
    private let lastSeen: LastSeenMoves
    private let devices: DeviceTokenSeal

    /// `secret` is the server's master key; device tokens are sealed under keys derived from it.
    /// Up to `cachedSessions` sessions are kept in memory (`SessionCache`).
    public init(pool: ConnectionPool, gate: DatabaseGate, secret: SymmetricKey, cachedSessions: Int = SessionStore.defaultCachedSessions) {
        self.pool = pool
        self.gate = gate
        self.cache = SessionCache(capacity: cachedSessions, maxAge: .seconds(1), lastSeenStep: .seconds(SessionStore.lastSeenStep))
        self.lastSeen = LastSeenMoves(pool: pool)
        self.devices = DeviceTokenSeal(secret: secret)
    }

    /// SHA-256 of a secret's text (tokens, transfer codes).
    static func digest(_ secret: String) -> Data { Data(tokenDigest(secret)) }

    /// SHA-256 of a secret's text, hashed from the string's own bytes: the session cache's key,
    /// worked out on every request.
    static func tokenDigest(_ secret: String) -> SHA256Digest {
        var hash = SHA256()
        var text = secret
        text.withUTF8 { hash.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return hash.finalize()
    }

    /// Lowercase hex SHA-256 of the token text.
    public static func hash(_ token: String) -> String { Hex.string(digest(token)) }

    // MARK: Signing in

    /// Opens a session for `user` with `token` (fresh from `SecretToken.generate()`) on
    /// `connection` (inside the sign-up's or the transfer's transaction). The token itself is
    /// never stored.
    static func open(_ token: String, for user: UUID, on connection: Connection) throws {
        try connection.execute(
            "INSERT INTO sessions (session_id, token_hash, user_id) VALUES ($1, $2, $3)",
            [UUID.random(), digest(token), user]
        )
    }

    /// The guarded row (`AppendRequest.guardedRows`) that opens `session` for `user` with
    /// `token` in the sign-up's append, whose first event is `eventID`, and only if that append
    /// wrote: a refused sign-up opens no session.
    static func opening(_ token: String, session: UUID, for user: UUID, withEvent eventID: UUID) -> GuardedRow {
        GuardedRow(openingTable, appended: eventID, values: [session, digest(token), user])
    }

    /// The session cache's generation, to take before opening a session (`opened(_:as:readIn:)`).
    var cacheGeneration: UInt64 { cache.generation }

    /// Caches a session this process just opened (its append committed): a new user's next
    /// requests, moments later, need not read it. `generation` is `cacheGeneration` from before
    /// the session was written.
    func opened(_ token: String, as caller: Caller, readIn generation: UInt64) {
        cache.remember(Self.tokenDigest(token), caller, readIn: generation)
    }

    /// The sessions' table as sign-ups write it.
    private static let openingTable = GuardedTable(
        "sessions",
        columns: [("session_id", "uuid"), ("token_hash", "bytea"), ("user_id", "uuid")]
    )

    /// The caller a bearer token belongs to, or `nil`.
    ///
    /// The row is found by the hash (an index lookup that reveals nothing about the token); a
    /// cached answer is at most a second old, or younger than the listener's latest check.
    public func caller(for token: String) async throws -> Caller? {
        // A token is 43 characters; anything far off is not worth a database round trip.
        guard (20...100).contains(token.utf8.count) else { return nil }
        let digest = Self.tokenDigest(token)
        if let cached = cache.caller(for: digest) {
            if cached.lastSeenDue { lastSeen.seen(cached.caller.session) }
            return cached.caller
        }
        let generation = cache.generation
        let found = try await gate.withConnection(pool) { connection -> (caller: Caller, seenAgo: Double)? in
            guard
                let row = try connection.execute(
                    "SELECT session_id, user_id, extract(epoch FROM now() - last_seen_at)::float8 FROM sessions WHERE token_hash = $1",
                    [Data(digest)],
                    prepared: true
                ).first
            else { return nil }
            return (Caller(user: try row.uuid(1), session: try row.uuid(0)), try row.double(2))
        }
        guard let found else { return nil }
        let due = found.seenAgo >= Self.lastSeenStep
        if due { lastSeen.seen(found.caller.session) }
        let nextMove = due ? Self.lastSeenStep : Self.lastSeenStep - found.seenAgo
        cache.remember(digest, found.caller, readIn: generation, lastSeenIn: .seconds(nextMove))
        return found.caller
    }

    // MARK: Signing out

    /// Ends `session` of `user`; false when `user` has no such session.
    public func revoke(_ session: UUID, of user: UUID) async throws -> Bool {
        let revoked = try await gate.withConnection(pool) { connection in
            try connection.execute(
                """
                WITH gone AS (DELETE FROM sessions WHERE session_id = $1 AND user_id = $2 RETURNING token_hash)
                SELECT pg_notify('\(Self.revocations)', encode(token_hash, 'hex')) FROM gone
                """,
                [session, user]
            ).count
        }
        cache.forget(user: user)
        return revoked > 0
    }

    /// Ends every session of `user` and forgets their transfer codes, on `connection` (inside
    /// the account deletion's transaction): each revocation is announced when it commits.
    public static func revokeAll(of user: UUID, on connection: Connection) throws {
        try endSessions(of: user, on: connection)
        try connection.execute("DELETE FROM transfer_codes WHERE user_id = $1", [user])
    }

    /// Ends every session of `user` and announces it (every process forgets them at once).
    static func endSessions(of user: UUID, on connection: Connection) throws {
        try connection.execute(
            """
            WITH gone AS (DELETE FROM sessions WHERE user_id = $1 RETURNING token_hash)
            SELECT pg_notify('\(revocations)', encode(token_hash, 'hex')) FROM gone
            """,
            [user]
        )
    }

    /// Inside the suspension's transaction: `user`'s sessions end and no new one opens until
    /// `unsuspend`. Serialized with `redeem` by a lock on the user, so a sign-in racing the
    /// suspension either ends with it or is refused.
    public static func suspend(_ user: UUID, on connection: Connection) throws {
        try lockSessions(of: user, on: connection)
        try connection.execute("INSERT INTO account_suspensions (user_id) VALUES ($1) ON CONFLICT DO NOTHING", [user])
        try endSessions(of: user, on: connection)
    }

    /// Inside the transaction that lifts a suspension: sign-ins work again.
    public static func unsuspend(_ user: UUID, on connection: Connection) throws {
        try lockSessions(of: user, on: connection)
        try connection.execute("DELETE FROM account_suspensions WHERE user_id = $1", [user])
    }

    /// A transaction lock on `user`'s sessions (suspension against sign-in).
    static func lockSessions(of user: UUID, on connection: Connection) throws {
        try connection.execute("SELECT pg_advisory_xact_lock(7411, hashtext($1::uuid::text))", [user])
    }

    /// Forgets `user`'s cached sessions in this process.
    public func forget(_ user: UUID) { cache.forget(user: user) }

    // MARK: Listing

    /// One of a user's sessions.
    public struct Row: Sendable {
        public var session: UUID
        public var createdAt: Date
        public var lastSeenAt: Date
        public var push: Bool
        /// Where the list continues below this row: (`created_at`, session id).
        public var key: TimeKey
    }

    /// Up to `limit` sessions of `user`, newest first, below `after` when given.
    public func sessions(of user: UUID, after: TimeKey?, limit: Int) async throws -> [Row] {
        try await gate.withConnection(pool) { connection in
            try connection.execute(
                """
                SELECT session_id, (extract(epoch FROM created_at) * 1000000)::bigint, last_seen_at, device_token_mac IS NOT NULL
                FROM sessions
                WHERE user_id = $1
                  AND ($2::bigint IS NULL OR (created_at, session_id)
                       < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
                ORDER BY created_at DESC, session_id DESC
                LIMIT $4
                """,
                [user, after?.micros, after?.id, limit]
            ).rows.map { row in
                let session = try row.uuid(0)
                let key = TimeKey(micros: try row.int64(1), id: session)
                return Row(session: session, createdAt: key.date, lastSeenAt: try row.date(2), push: try row.bool(3), key: key)
            }
        }
    }

    // MARK: Devices

    /// Pushes for `caller`'s session go to `device`; a session that held the same token gives it up.
    public func register(_ device: DeviceRegistration, for caller: Caller) async throws {
        let (mac, sealed) = try devices.seal(device.token)
        try await gate.withConnection(pool) { connection in
            try connection.transaction { connection in
                try connection.execute(
                    """
                    UPDATE sessions SET device_token_mac = NULL, device_token_sealed = NULL
                    WHERE device_token_mac = $1 AND session_id <> $2
                    """,
                    [mac, caller.session]
                )
                try connection.execute(
                    "UPDATE sessions SET device_token_mac = $1, device_token_sealed = $2, locale = $3 WHERE session_id = $4",
                    [mac, sealed, device.locale.rawValue, caller.session]
                )
            }
        }
    }

    /// No more pushes for `caller`'s session.
    public func unregisterDevice(of caller: Caller) async throws {
        try await gate.withConnection(pool) { connection in
            _ = try connection.execute(
                "UPDATE sessions SET device_token_mac = NULL, device_token_sealed = NULL WHERE session_id = $1",
                [caller.session]
            )
        }
    }

    /// The device token of `session` in the clear (for the push service), if it has one.
    public func deviceToken(of session: UUID) async throws -> String? {
        let row = try await gate.withConnection(pool) { connection in
            try connection.execute(
                """
                SELECT encode(device_token_mac, 'hex'), encode(device_token_sealed, 'hex') FROM sessions
                WHERE session_id = $1 AND device_token_mac IS NOT NULL
                """,
                [session]
            ).first.map { (try $0.string(0), try $0.string(1)) }
        }
        guard let (macHex, sealedHex) = row, let mac = Hex.bytes(macHex), let sealed = Hex.bytes(sealedHex) else { return nil }
        return try devices.open(mac: Data(mac), sealed: Data(sealed))
    }

    // MARK: Transfer codes

    /// Why a transfer code does not sign anyone in.
    public enum TransferRefusal: Error {
        case invalid, expired
        /// The account is suspended: no new session until the suspension is lifted.
        case suspended
    }

    /// A fresh transfer code for `user`: 130 random bits as 26 base32 characters (a QR code of
    /// the smallest sizes holds it), valid 10 minutes, single use; only its SHA-256 is stored.
    public func issueTransferCode(for user: UUID, now: Date = Date()) async throws -> (code: String, expiresAt: Date) {
        let code = Self.base32Code()
        let expiresAt = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + Self.transferCodeLifetime).rounded(.down))
        try await gate.withConnection(pool) { connection in
            _ = try connection.execute(
                "INSERT INTO transfer_codes (code_hash, user_id, expires_at) VALUES ($1, $2, $3)",
                [Self.digest(code), user, expiresAt]
            )
        }
        return (code, expiresAt)
    }

    /// Spends `code` and opens a session for its user, in one transaction: two phones with one
    /// code, only one gets in. Returns the user and the new session's token.
    public func redeem(_ code: String) async throws -> (user: UUID, token: String) {
        // Case and separators a person may add when typing it do not matter.
        let normalized = code.uppercased().filter { $0 != "-" && $0 != " " }
        guard normalized.utf8.count == 26 else { throw TransferRefusal.invalid }
        let digest = Self.digest(normalized)
        let outcome = try await gate.withConnection(pool) { connection -> Result<(user: UUID, token: String), TransferRefusal> in
            try connection.transaction { connection in
                guard let holder = try connection.execute("SELECT user_id FROM transfer_codes WHERE code_hash = $1", [digest]).first
                else { return .failure(.invalid) }
                // A suspended account opens no session, and its code stays for when it is lifted.
                let user = try holder.uuid(0)
                try Self.lockSessions(of: user, on: connection)
                let suspended = try connection.execute("SELECT 1 FROM account_suspensions WHERE user_id = $1", [user])
                guard suspended.first == nil else { return .failure(.suspended) }
                guard
                    let row = try connection.execute(
                        "DELETE FROM transfer_codes WHERE code_hash = $1 RETURNING expires_at <= now()",
                        [digest]
                    ).first
                else { return .failure(.invalid) }
                // An expired code is spent all the same (the deletion commits): it never works again.
                guard try !row.bool(0) else { return .failure(.expired) }
                let token = SecretToken.generate()
                try Self.open(token, for: user, on: connection)
                return .success((user, token))
            }
        }
        return try outcome.get()
    }

    /// Compares without an early exit.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// Deletes transfer codes that expired a while ago.
    func purgeExpiredTransferCodes() async throws {
        try await gate.withConnection(pool) { connection in
            _ = try connection.execute("DELETE FROM transfer_codes WHERE expires_at < now() - interval '1 hour'")
        }
    }

    static let base32 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// 26 characters of RFC 4648 base32 (130 random bits), upper case: short for a QR code and
    /// unambiguous to read aloud.
    static func base32Code() -> String {
        // 32 divides 256: the low five bits of a random byte are a uniform letter.
        String(decoding: SecureRandom.bytes(26).map { base32[Int($0 & 31)] }, as: UTF8.self)
    }
}
