@preconcurrency import Crypto
import EventLog
import Foundation
import Postgres
import Synchronization
import UUIDText

/// Why personal data could not be sealed.
public enum PersonalDataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The user deleted their account: nothing more can be written under their key.
    case erased(UUID)
    /// A stored key does not open under this server's master key (the key was replaced?).
    case unreadableKey(UUID)
    /// A sealed event names a user with no row in `data_keys` (a log imported without its keys?).
    case missingKey(UUID)
    /// A sealed box does not open under its owner's key: the event was altered.
    case tampered(UUID)
    /// An event read without its body is no longer in the log (an append-only log never loses one).
    case missingEvent(UUID)

    public var description: String {
        switch self {
        case .erased(let user): "user \(user.lowercasedString) deleted their account; their data key is gone"
        case .unreadableKey(let user):
            "the data key of user \(user.lowercasedString) does not open under this master key (SNIFFMEET_MASTER_KEY changed?)"
        case .missingKey(let user): "no data key for user \(user.lowercasedString): data_keys must come with the log"
        case .tampered(let user): "a sealed event of user \(user.lowercasedString) does not open under their key"
        case .missingEvent(let id): "event \(id.lowercasedString) was read from the feed but its data is gone"
        }
    }
}

/// Every user's data key (AES-256-GCM), kept in `data_keys` sealed under a key derived from the
/// master key, and destroyed when the user deletes their account (crypto-shredding).
///
/// Keys are cached once read: a key never changes while it exists. An erasure is permanent, so
/// it is cached too; whether a user was erased *since* is asked of the table (`erasedUsers`),
/// never of the cache.
public final class DataKeys: Sendable {
    /// A user's key, or the fact that it was destroyed.
    public enum Entry: Sendable {
        case key(SymmetricKey)
        case erased
    }

    private let wrapping: SymmetricKey
    /// Bounded (`GenerationalMap`): the table is the truth; a key dropped is read again.
    private let cache = Mutex(GenerationalMap<UUID, Entry>(capacity: 100_000))
    /// The erased users as last read, with how many there were (a changed count means reload).
    private let erased = Mutex<(count: Int, users: Set<UUID>)>((-1, []))

    /// `secret` is the server's master key; keys are sealed under a key derived from it.
    public init(secret: SymmetricKey) {
        self.wrapping = ServerSecret.derive(secret, purpose: "data keys")
    }

    /// The cached entry of `user`, if any.
    public func cached(_ user: UUID) -> Entry? { cache.withLock { $0.value(for: user) } }

    /// The entries of `users` from the cache, reading the others from `data_keys` on
    /// `connection`; with `create`, users without a row get a fresh key (written on
    /// `connection`, so inside its transaction if it has one). Users with neither row nor key
    /// are missing from the answer.
    public func entries(for users: some Collection<UUID>, creating create: Bool, on connection: Connection) throws -> [UUID: Entry] {
        var found: [UUID: Entry] = [:]
        var missing: [UUID] = []
        cache.withLock { cache in
            for user in users {
                if let entry = cache.value(for: user) { found[user] = entry } else { missing.append(user) }
            }
        }
        guard !missing.isEmpty else { return found }
        let loaded = try load(missing, on: connection)
        found.merge(loaded) { $1 }
        if create {
            let absent = missing.filter { loaded[$0] == nil }
            if !absent.isEmpty {
                var fresh: [UUID: SymmetricKey] = [:]
                for user in absent { fresh[user] = SymmetricKey.fresh256() }
                let users = Array(fresh.keys)
                let sealed = try users.map { user in try seal(fresh[user]!, of: user) }
                // Another transaction may create the same user's key at the same moment (a
                // first write of an older account on two processes): the row it wins with is
                // the one used, read back below.
                try connection.execute(
                    """
                    INSERT INTO data_keys (user_id, sealed_key)
                    SELECT user_id, key FROM unnest($1::uuid[], $2::bytea[]) AS x(user_id, key)
                    ON CONFLICT (user_id) DO NOTHING
                    """,
                    [users, sealed]
                )
                // Not cached: if `connection`'s transaction rolls back, these rows were never
                // written, and a cached key would seal events that nobody could open again.
                found.merge(try load(users, on: connection, caching: false)) { $1 }
            }
        }
        return found
    }

    /// Reads and opens the rows of `users`, caching them.
    private func load(_ users: [UUID], on connection: Connection, caching: Bool = true) throws -> [UUID: Entry] {
        let result = try connection.execute(
            "SELECT user_id, encode(sealed_key, 'hex') FROM data_keys WHERE user_id = ANY($1::uuid[])",
            [users]
        )
        var entries: [UUID: Entry] = [:]
        for row in result.rows {
            let user = try row.uuid(0)
            if row.isNull(1) {
                entries[user] = .erased
            } else {
                entries[user] = .key(try open(try row.string(1), of: user))
            }
        }
        if caching { cache.withLock { $0.set(contentsOf: entries) } }
        return entries
    }

    /// The NOTIFY channel announcing erased keys, so that every process forgets its copy.
    public static let erasures = "sniffmeet_erasures"

    /// Destroys `user`'s key on `connection` (inside the account deletion's transaction) and
    /// announces it to every process when that commits. A user without a row (an account older
    /// than encryption) gets a tombstone row all the same.
    public func erase(_ user: UUID, on connection: Connection) throws {
        try connection.execute(
            """
            INSERT INTO data_keys (user_id, sealed_key, erased_at) VALUES ($1, NULL, now())
            ON CONFLICT (user_id) DO UPDATE SET sealed_key = NULL, erased_at = now()
            """,
            [user]
        )
        try connection.execute("SELECT pg_notify('\(Self.erasures)', '')")
    }

    /// The row that stores `key`, the new key of `user`, in the transaction that appends their
    /// `user_registered` (`eventID`), and only then (`GuardedRow`): a refused sign-up leaves no
    /// key. A user's id is made fresh at sign-up, so no row can be there yet.
    public func storing(_ key: SymmetricKey, of user: UUID, withEvent eventID: UUID) -> GuardedRow {
        // Sealing with a fresh random nonce cannot fail.
        GuardedRow(Self.table, appended: eventID, values: [user, try! seal(key, of: user)])
    }

    /// The keys' table as sign-ups write it.
    private static let table = GuardedTable(
        "data_keys",
        columns: [("user_id", "uuid"), ("sealed_key", "bytea")]
    )

    /// Caches the key of `user` once the append that stored it committed.
    public func remember(_ user: UUID, key: SymmetricKey) {
        cache.withLock { $0.set(.key(key), for: user) }
    }

    /// Forgets every cached key (another process erased one): keys are read again on next use.
    public func forgetCachedKeys() {
        cache.withLock { cache in cache.filter { if case .erased = $0 { true } else { false } } }
    }

    /// Forgets `user`'s cached key (after their erasure committed).
    public func forget(_ user: UUID) {
        cache.withLock { $0.set(.erased, for: user) }
    }

    /// Which of `users` are erased now, as the table says. One cheap count per call; the
    /// erased ids are re-read only when the count moved.
    public func erasedUsers(among users: some Sequence<UUID>, on connection: Connection) throws -> Set<UUID> {
        let count = try connection.execute("SELECT count(*) FROM data_keys WHERE sealed_key IS NULL", prepared: true).first!.int64(0)
        let known = erased.withLock { $0 }
        var set = known.users
        if Int(count) != known.count {
            let result = try connection.execute("SELECT user_id FROM data_keys WHERE sealed_key IS NULL")
            set = Set(try result.rows.map { try $0.uuid(0) })
            erased.withLock { $0 = (Int(count), set) }
        }
        return set.intersection(users)
    }

    // MARK: Sealing keys under the master key

    /// `key` as `data_keys.sealed_key` holds it (hex), for loaders that make keys themselves.
    public func sealedHex(_ key: SymmetricKey, of user: UUID) -> String {
        // Sealing with a fresh random nonce cannot fail.
        Hex.string(try! seal(key, of: user))
    }

    /// The key sealed under the wrapping key, bound to its user: nonce, sealed key and tag, as
    /// the column's bytes.
    private func seal(_ key: SymmetricKey, of user: UUID) throws -> Data {
        let box = try AES.GCM.seal(
            key.withUnsafeBytes { Data($0) },
            using: wrapping,
            nonce: .fresh(),
            authenticating: Data(user.lowercasedString.utf8)
        )
        return box.combined!
    }

    private func open(_ hex: String, of user: UUID) throws -> SymmetricKey {
        guard let bytes = Hex.bytes(hex),
            let box = try? AES.GCM.SealedBox(combined: bytes),
            let key = try? AES.GCM.open(box, using: wrapping, authenticating: Data(user.lowercasedString.utf8))
        else { throw PersonalDataError.unreadableKey(user) }
        return SymmetricKey(data: key)
    }

}
