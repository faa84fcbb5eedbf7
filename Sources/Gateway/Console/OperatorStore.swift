import Commands
@preconcurrency import Crypto
import Foundation
import Postgres
import UUIDText
import _CryptoExtras

/// Operator accounts, their one-time password links, console sessions and API tokens, all in
/// PostgreSQL (tables of `0026_operators.sql`), so every `serve` process accepts them. Secrets
/// are kept only as their SHA-256; passwords as scrypt. The command line (as the schema's
/// owner) adds and removes operators and issues tokens; the server (runtime role) signs in.
public enum OperatorStore {
    /// How long a password link works.
    public static let linkLifetime: TimeInterval = 24 * 3600
    /// How long a console session lasts.
    public static let sessionLifetime: TimeInterval = 12 * 3600

    /// Why an operator account action was refused.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case invalidName(String)
        case reservedName(String)
        case exists(String)
        case notFound(String)
        case weakPassword

        public var description: String {
            switch self {
            case .invalidName(let name): "\(name) is not an operator name (a lowercase letter, then up to 31 of a-z, 0-9, _ and -)"
            case .reservedName(let name): "\(name) is reserved: it names the holder of SNIFFMEET_ADMIN_TOKEN"
            case .exists(let name): "operator \(name) exists already"
            case .notFound(let name): "no operator is named \(name)"
            case .weakPassword: "a password has 12 to 200 characters"
            }
        }
    }

    /// One operator as `operators list` shows them.
    public struct Account: Sendable, Equatable {
        public var name: String
        public var hasPassword: Bool
        public var sessions: Int
        public var tokens: Int
        public var createdAt: Date
    }

    /// A signed-in operator: their name and the CSRF token of their forms.
    public struct Session: Sendable, Equatable {
        public var name: String
        public var csrfToken: String
    }

    static func digest(_ secret: String) -> Data { Data(SHA256.hash(data: Data(secret.utf8))) }

    /// Checks `name` against the accounts' rule; `admin` is taken by the admin token.
    public static func validate(_ name: String) throws(Failure) {
        guard name.range(of: "^[a-z][a-z0-9_-]{0,31}$", options: .regularExpression) != nil else { throw .invalidName(name) }
        guard name != "admin" else { throw .reservedName(name) }
    }

    // MARK: The command line (owner)

    /// Adds `name` without a password; returns the secret of its one-time link (24 hours).
    public static func add(_ name: String, on connection: Connection) throws -> String {
        try validate(name)
        let link = SecretToken.generate()
        try connection.transaction { connection in
            let inserted = try connection.execute(
                "INSERT INTO operators (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING name",
                [name]
            )
            guard inserted.first != nil else { throw Failure.exists(name) }
            try connection.execute(
                "INSERT INTO operator_links (link_hash, name, expires_at) VALUES ($1, $2, now() + $3 * interval '1 second')",
                [digest(link), name, Int(linkLifetime)]
            )
        }
        return link
    }

    /// Removes `name`: its sessions end, its tokens and links stop working (cascade). What it did
    /// stays in the log under its name.
    public static func remove(_ name: String, on connection: Connection) throws {
        let removed = try connection.execute("DELETE FROM operators WHERE name = $1 RETURNING name", [name])
        guard removed.first != nil else { throw Failure.notFound(name) }
    }

    /// Every operator, by name.
    public static func list(on connection: Connection) throws -> [Account] {
        try connection.execute(
            """
            SELECT o.name, o.password_hash IS NOT NULL,
                   (SELECT count(*) FROM console_sessions s WHERE s.name = o.name AND s.expires_at > now()),
                   (SELECT count(*) FROM operator_tokens t WHERE t.name = o.name), o.created_at
            FROM operators o ORDER BY o.name
            """
        ).rows.map { row in
            Account(
                name: try row.string(0),
                hasPassword: try row.bool(1),
                sessions: try row.int(2),
                tokens: try row.int(3),
                createdAt: try row.date(4)
            )
        }
    }

    /// A new API token of `name` for the JSON routes under `/v1/admin`.
    public static func issueToken(_ name: String, on connection: Connection) throws -> String {
        let token = SecretToken.generate()
        let inserted = try connection.execute(
            "INSERT INTO operator_tokens (token_hash, name) SELECT $1, name FROM operators WHERE name = $2 RETURNING name",
            [digest(token), name]
        )
        guard inserted.first != nil else { throw Failure.notFound(name) }
        return token
    }

    // MARK: The server (runtime role)

    /// The operator whose password link this is, while it works.
    public static func linkOwner(_ link: String, on connection: Connection) throws -> String? {
        guard (20...100).contains(link.utf8.count) else { return nil }
        return try connection.execute(
            "SELECT name FROM operator_links WHERE link_hash = $1 AND expires_at > now()",
            [digest(link)]
        ).first?.string(0)
    }

    /// Sets the password of the link's operator and spends the link (every link of theirs);
    /// returns their name, or nil when the link does not work (used, expired, unknown).
    public static func setPassword(link: String, password: String, on connection: Connection) throws -> String? {
        guard (12...200).contains(password.count) else { throw Failure.weakPassword }
        let hash = try PasswordHash.make(password)
        return try connection.transaction { connection in
            guard
                let name = try connection.execute(
                    "DELETE FROM operator_links WHERE link_hash = $1 AND expires_at > now() RETURNING name",
                    [digest(link)]
                ).first?.string(0)
            else { return nil }
            try connection.execute("UPDATE operators SET password_hash = $1 WHERE name = $2", [hash, name])
            try connection.execute("DELETE FROM operator_links WHERE name = $1", [name])
            return name
        }
    }

    /// The stored password hash of `name` (nil: no such operator or no password yet).
    public static func passwordHash(of name: String, on connection: Connection) throws -> String? {
        try connection.execute("SELECT password_hash FROM operators WHERE name = $1", [name]).first?.optionalString(0)
    }

    /// Opens a console session for `name`; returns its cookie secret and CSRF token.
    public static func openSession(for name: String, on connection: Connection) throws -> (token: String, session: Session) {
        let token = SecretToken.generate()
        let csrf = SecretToken.generate()
        try connection.execute(
            """
            INSERT INTO console_sessions (token_hash, name, csrf_token, expires_at)
            VALUES ($1, $2, $3, now() + $4 * interval '1 second')
            """,
            [digest(token), name, csrf, Int(sessionLifetime)]
        )
        return (token, Session(name: name, csrfToken: csrf))
    }

    /// The session a cookie secret opened, while it lasts.
    public static func session(_ token: String, on connection: Connection) throws -> Session? {
        guard (20...100).contains(token.utf8.count) else { return nil }
        return try connection.execute(
            "SELECT name, csrf_token FROM console_sessions WHERE token_hash = $1 AND expires_at > now()",
            [digest(token)]
        ).first.map { Session(name: try $0.string(0), csrfToken: try $0.string(1)) }
    }

    /// Ends the session of a cookie secret (and drops expired ones on the way).
    public static func endSession(_ token: String, on connection: Connection) throws {
        try connection.execute("DELETE FROM console_sessions WHERE token_hash = $1 OR expires_at < now()", [digest(token)])
    }

    /// The operator an API token belongs to, or nil.
    public static func tokenOwner(_ token: String, on connection: Connection) throws -> String? {
        guard (20...100).contains(token.utf8.count) else { return nil }
        return try connection.execute("SELECT name FROM operator_tokens WHERE token_hash = $1", [digest(token)]).first?.string(0)
    }
}

/// Operators' passwords as scrypt (N = 2^15, r = 8, p = 1: about 32 MiB and a few tens of
/// milliseconds per check), stored with their parameters and salt so they can be raised later.
enum PasswordHash {
    static let logN = 15
    static let r = 8
    static let p = 1

    static func make(_ password: String) throws -> String {
        let salt = SecureRandom.bytes(16)
        let key = try derive(password, salt: salt, logN: logN, r: r, p: p)
        return "scrypt$\(logN)$\(r)$\(p)$\(Data(salt).base64EncodedString())$\(Data(key).base64EncodedString())"
    }

    /// True when `password` matches `stored` (compared in constant time).
    static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt", let logN = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]),
            (10...20).contains(logN), let salt = Data(base64Encoded: String(parts[4])),
            let expected = Data(base64Encoded: String(parts[5])),
            let key = try? derive(password, salt: Array(salt), logN: logN, r: r, p: p)
        else { return false }
        return SessionStore.constantTimeEqual(key, Array(expected))
    }

    static func derive(_ password: String, salt: [UInt8], logN: Int, r: Int, p: Int) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8),
            salt: salt,
            outputByteCount: 32,
            rounds: 1 << logN,
            blockSize: r,
            parallelism: p,
            maxMemory: 64 * 1024 * 1024
        )
        return key.withUnsafeBytes { Array($0) }
    }
}
