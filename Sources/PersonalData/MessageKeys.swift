@preconcurrency import Crypto
import EventLog
import Foundation
import Postgres
import Synchronization
import UUIDText

/// Every chat message's own key (AES-256-GCM), kept in `message_keys` sealed under the sender's
/// data key: unsending destroys the one message's key, deleting the account destroys all of the
/// sender's (and their data key, under which the rest were sealed).
///
/// Keys are cached once read; a destroyed key is announced on `DataKeys.erasures`, and every
/// process then forgets its cached message keys (`forgetCachedKeys`).
public final class MessageKeys: Sendable {
    private let dataKeys: DataKeys
    /// Bounded (`GenerationalMap`): the table is the truth; a key dropped is read again.
    private let cache = Mutex(GenerationalMap<UUID, DataKeys.Entry>(capacity: 100_000))

    init(dataKeys: DataKeys) {
        self.dataKeys = dataKeys
    }

    /// The cached entry of `message`, if any.
    public func cached(_ message: UUID) -> DataKeys.Entry? { cache.withLock { $0.value(for: message) } }

    /// The entries of `messages` (message id → sender) from the cache, reading the others from
    /// `message_keys` on `connection`; with `create`, messages without a row get a fresh key
    /// sealed under their sender's data key (created too if need be). A message whose row or
    /// whose sender's key was destroyed is `.erased`; one with neither row nor key is missing.
    public func entries(for messages: [UUID: UUID], creating create: Bool, on connection: Connection) throws -> [UUID: DataKeys.Entry] {
        var found: [UUID: DataKeys.Entry] = [:]
        var missing: [UUID] = []
        cache.withLock { cache in
            for message in messages.keys {
                if let entry = cache.value(for: message) { found[message] = entry } else { missing.append(message) }
            }
        }
        guard !missing.isEmpty else { return found }
        let loaded = try load(missing, on: connection, caching: true)
        found.merge(loaded) { $1 }
        let absent = missing.filter { loaded[$0] == nil }
        if create, !absent.isEmpty {
            let senders = try dataKeys.entries(for: Set(absent.compactMap { messages[$0] }), creating: true, on: connection)
            var ids: [UUID] = []
            var owners: [UUID] = []
            var sealed: [Data] = []
            for message in absent {
                guard let sender = messages[message] else { continue }
                guard case .key(let senderKey) = senders[sender] else { throw PersonalDataError.erased(sender) }
                ids.append(message)
                owners.append(sender)
                sealed.append(try Self.seal(SymmetricKey.fresh256(), of: message, under: senderKey))
            }
            // A concurrent first send of the same message (a retry) keeps the row that won.
            try connection.execute(
                """
                INSERT INTO message_keys (message_id, sender, sealed_key)
                SELECT m, s, k FROM unnest($1::uuid[], $2::uuid[], $3::bytea[]) AS x(m, s, k)
                ON CONFLICT (message_id) DO NOTHING
                """,
                [ids, owners, sealed]
            )
            // Not cached: the caller's transaction may still roll back.
            found.merge(try load(ids, on: connection, caching: false)) { $1 }
        }
        return found
    }

    /// The statement that stores `key`, the new key of `message`, sealed under its sender's
    /// key, in the transaction that appends the message's event `eventID`, and only then
    /// (`EventLog.appendedHere`): a refused or failed send leaves no row. Message ids are made
    /// fresh per send, so no row can be there yet (a retry after an unknown outcome finds its
    /// first run's events and key before it appends again).
    public static func storing(
        _ key: SymmetricKey,
        of message: UUID,
        sender: UUID,
        under senderKey: SymmetricKey,
        withEvent eventID: UUID
    ) throws -> GuardedRow {
        GuardedRow(Self.table, appended: eventID, values: [message, sender, try seal(key, of: message, under: senderKey)])
    }

    /// The message keys' table as sends write it.
    private static let table = GuardedTable(
        "message_keys",
        columns: [("message_id", "uuid"), ("sender", "uuid"), ("sealed_key", "bytea")]
    )

    /// Caches the key of `message` once the append that stored it committed.
    public func remember(_ message: UUID, key: SymmetricKey) {
        cache.withLock { $0.set(.key(key), for: message) }
    }

    /// The entries of `messages` for opening their events: cached, or read on `connection`.
    public func entries(reading messages: Set<UUID>, on connection: Connection) throws -> [UUID: DataKeys.Entry] {
        var found: [UUID: DataKeys.Entry] = [:]
        var missing: [UUID] = []
        cache.withLock { cache in
            for message in messages {
                if let entry = cache.value(for: message) { found[message] = entry } else { missing.append(message) }
            }
        }
        guard !missing.isEmpty else { return found }
        found.merge(try load(missing, on: connection, caching: true)) { $1 }
        return found
    }

    /// Reads and opens the rows of `messages` with their senders' data keys.
    private func load(_ messages: [UUID], on connection: Connection, caching: Bool) throws -> [UUID: DataKeys.Entry] {
        let result = try connection.execute(
            "SELECT message_id, sender, encode(sealed_key, 'hex') FROM message_keys WHERE message_id = ANY($1::uuid[])",
            [messages]
        )
        var rows: [(message: UUID, sender: UUID, hex: String?)] = []
        for row in result.rows {
            rows.append((try row.uuid(0), try row.uuid(1), row.isNull(2) ? nil : try row.string(2)))
        }
        let senders = Set(rows.filter { $0.hex != nil }.map(\.sender))
        let senderKeys = senders.isEmpty ? [:] : try dataKeys.entries(for: senders, creating: false, on: connection)
        var entries: [UUID: DataKeys.Entry] = [:]
        for row in rows {
            guard let hex = row.hex, case .key(let senderKey) = senderKeys[row.sender] else {
                entries[row.message] = .erased
                continue
            }
            entries[row.message] = .key(try Self.open(hex, of: row.message, under: senderKey))
        }
        if caching { cache.withLock { $0.set(contentsOf: entries) } }
        return entries
    }

    /// Destroys the key of `message` on `connection` (inside the unsend's transaction) and
    /// announces it to every process when that commits.
    public func erase(_ message: UUID, on connection: Connection) throws {
        try connection.execute(
            "UPDATE message_keys SET sealed_key = NULL, erased_at = now() WHERE message_id = $1 AND sealed_key IS NOT NULL",
            [message]
        )
        try connection.execute("SELECT pg_notify('\(DataKeys.erasures)', '')")
    }

    /// Destroys the keys of every message `sender` sent (inside the account deletion's transaction).
    public func eraseAll(of sender: UUID, on connection: Connection) throws {
        try connection.execute(
            "UPDATE message_keys SET sealed_key = NULL, erased_at = now() WHERE sender = $1 AND sealed_key IS NOT NULL",
            [sender]
        )
        try connection.execute("SELECT pg_notify('\(DataKeys.erasures)', '')")
    }

    /// Marks `message`'s key destroyed here (after its erasure committed).
    public func forget(_ message: UUID) {
        cache.withLock { $0.set(.erased, for: message) }
    }

    /// Forgets every cached key (another process destroyed one): read again on next use.
    public func forgetCachedKeys() {
        cache.withLock { cache in cache.filter { if case .erased = $0 { true } else { false } } }
    }

    /// The key sealed under the sender's key, bound to its message: nonce, sealed key and tag,
    /// as the column's bytes.
    private static func seal(_ key: SymmetricKey, of message: UUID, under senderKey: SymmetricKey) throws -> Data {
        try AES.GCM.seal(key.withUnsafeBytes { Data($0) }, using: senderKey, nonce: .fresh(), authenticating: binding(message)).combined!
    }

    private static func open(_ hex: String, of message: UUID, under senderKey: SymmetricKey) throws -> SymmetricKey {
        guard let bytes = Hex.bytes(hex),
            let box = try? AES.GCM.SealedBox(combined: bytes),
            let key = try? AES.GCM.open(box, using: senderKey, authenticating: binding(message))
        else { throw PersonalDataError.unreadableKey(message) }
        return SymmetricKey(data: key)
    }

    private static func binding(_ message: UUID) -> Data { Data("message \(message.lowercasedString)".utf8) }
}
