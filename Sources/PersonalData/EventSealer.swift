@preconcurrency import Crypto
import Domain
import EventLog
import Foundation
import Postgres
import UUIDText

/// The log's edge for personal data: events go in with their personal part sealed under the key
/// of the user it belongs to, and come out opened, or as `Event.erased` once that key is gone.
///
/// Stored JSON is the event's clear part (`EventPart.clear`) with one more member,
/// `"sealed": {"owner": <user id>, "box": <base64 of nonce, ciphertext and tag>}`; the box
/// holds the personal part's JSON, AES-GCM under the owner's key, bound to the event type and
/// owner. Events with no personal fields, and events written before encryption, are stored
/// and read as they are.
public struct EventSealer: Sendable {
    public let keys: DataKeys
    /// Chat messages' own keys, each sealed under its sender's data key.
    public let messageKeys: MessageKeys
    /// The keyed hash of nickname stream names with its key already set up: `HMAC.init(key:)`
    /// hashes the key's two pads, half the work of naming one stream; each use copies it.
    private let nicknameStreams: HMAC<SHA256>
    /// Events this process appended, by event id, as the domain decided them: the projectors
    /// of the same process read them back moments later, and opening and decoding them again
    /// was a tenth of the server's CPU per SendWalk (`perf record`). Bounded (two generations of
    /// 16,384: a sign-up flood's projectors lag by thousands of events, and those pushed out are
    /// read from the log again); emptied whenever a key is erased.
    private let appended = AppendedEvents(capacity: 32_768)

    /// `secret` is the server's master key.
    public init(secret: SymmetricKey) {
        self.keys = DataKeys(secret: secret)
        self.messageKeys = MessageKeys(dataKeys: keys)
        self.nicknameStreams = HMAC(key: ServerSecret.derive(secret, purpose: "nickname streams"))
    }

    // MARK: Stream names

    /// The name `stream` has in the log. A nickname stream is named by a keyed hash (HMAC-SHA256
    /// under the master key) of the folded nickname, so the log's stream ids say nothing of it.
    public func storedName(_ stream: StreamName) -> String {
        guard stream.kind == .nickname else { return stream.rawValue }
        var hash = nicknameStreams
        hash.update(data: Array(stream.rawValue.utf8.dropFirst("nickname-".utf8.count)))
        return "nickname-" + Hex.string(hash.finalize())
    }

    // MARK: Sealing

    /// The users whose keys sealing `events` needs (a chat message's sender included: their key
    /// seals the message's own).
    public static func owners(of events: some Sequence<Event>) -> Set<UUID> {
        Set(events.compactMap(\.personalDataOwner))
    }

    /// The chat messages whose own keys sealing `events` needs, each with its sender.
    public static func messages(of events: some Sequence<Event>) -> [UUID: UUID] {
        var messages: [UUID: UUID] = [:]
        for event in events { if let message = event.messageKeyID, let sender = event.personalDataOwner { messages[message] = sender } }
        return messages
    }

    /// `event` as the log stores it, given its owner's key among `keys` (for a chat message,
    /// the message's own key, under the message's id: ids never collide).
    public func data(of event: Event, keys: [UUID: DataKeys.Entry]) throws -> Data {
        guard let owner = event.messageKeyID ?? event.personalDataOwner else { return event.encodedData() }
        guard case .key(let key) = keys[owner] else {
            throw keys[owner] == nil ? PersonalDataError.missingKey(owner) : PersonalDataError.erased(owner)
        }
        let box = try AES.GCM.seal(
            event.encodedData(.personal),
            using: key,
            nonce: .fresh(),
            authenticating: Self.binding(event.typeName, owner)
        )
        let sealed = box.combined!
        var out: [UInt8] = []
        // The clear part always has members (ids, times): its "}" gives way to one more.
        let clear = event.encodedData(.clear)
        out.reserveCapacity(clear.count + sealed.count * 4 / 3 + 96)
        out.append(contentsOf: clear.dropLast())
        out.append(contentsOf: #","sealed":{"box":""#.utf8)
        out.append(contentsOf: sealed.base64EncodedData())
        out.append(contentsOf: #"","owner":""#.utf8)
        owner.appendLowercase(to: &out)
        out.append(contentsOf: #""}}"#.utf8)
        return Data(out)
    }

    /// `events` as the log stores them, reading (and for users without one yet, creating) the
    /// keys they need on `connection`.
    public func data(of events: [Event], on connection: Connection) throws -> [Data] {
        let owners = Self.owners(of: events)
        var keys = owners.isEmpty ? [:] : try self.keys.entries(for: owners, creating: true, on: connection)
        let messages = Self.messages(of: events)
        if !messages.isEmpty { keys.merge(try messageKeys.entries(for: messages, creating: true, on: connection)) { $1 } }
        return try events.map { try data(of: $0, keys: keys) }
    }

    /// The keys `events` need, from the cache or else read (users' keys created if need be)
    /// through `pool`: for appends that have no connection of their own (group commit). A sent
    /// chat message without a stored key gets its key from `fresh`, or a new one put there: not
    /// stored here, the append stores it with its event (`guardedRows(for:fresh:keys:eventIDs:)`),
    /// so a refused send leaves no key behind. The caller keeps `fresh` across its retries.
    public func keys(
        for events: [Event],
        pool: ConnectionPool,
        fresh: inout FreshMessageKeys
    ) async throws -> [UUID: DataKeys.Entry] {
        let owners = Self.owners(of: events)
        let messages = Self.messages(of: events)
        let sent = Self.sentMessages(of: events)
        var found: [UUID: DataKeys.Entry] = [:]
        for owner in owners { found[owner] = keys.cached(owner) ?? fresh.users[owner].map { .key($0) } }
        // A user signing up has no key yet (their id is new): theirs is made here and stored by
        // the append, so a refused sign-up (a taken nickname) leaves no key behind.
        for user in Self.registeredUsers(of: events) where found[user] == nil {
            let key = SymmetricKey.fresh256()
            fresh.users[user] = key
            found[user] = .key(key)
        }
        for message in messages.keys { found[message] = messageKeys.cached(message) ?? fresh.keys[message].map { .key($0) } }
        let reading = Set(messages.keys.filter { found[$0] == nil && !sent.contains($0) })
        let unknown = owners.filter { found[$0] == nil }
        if !unknown.isEmpty || !reading.isEmpty {
            let keys = self.keys
            let messageKeys = self.messageKeys
            let read = try await pool.withConnection { connection in
                var read = unknown.isEmpty ? [:] : try keys.entries(for: unknown, creating: true, on: connection)
                if !reading.isEmpty { read.merge(try messageKeys.entries(reading: reading, on: connection)) { $1 } }
                return read
            }
            found.merge(read) { old, _ in old }
        }
        for message in sent where found[message] == nil {
            let key = SymmetricKey.fresh256()
            fresh.keys[message] = key
            found[message] = .key(key)
        }
        return found
    }

    /// The rows that store the `fresh` keys of the users `events` register and of the messages
    /// they send, each in the append of its event (`eventIDs`, in the order of `events`) and only
    /// if that append writes.
    public func guardedRows(
        for events: [Event],
        fresh: FreshMessageKeys,
        keys: [UUID: DataKeys.Entry],
        eventIDs: [UUID]
    ) throws -> [GuardedRow] {
        var writes: [GuardedRow] = []
        for (event, eventID) in zip(events, eventIDs) {
            if case .userRegistered(let registered) = event, let key = fresh.users[registered.userID] {
                writes.append(self.keys.storing(key, of: registered.userID, withEvent: eventID))
            }
            guard case .messageSent(let sent) = event, let key = fresh.keys[sent.messageID] else { continue }
            guard case .key(let senderKey) = keys[sent.from] else { throw PersonalDataError.erased(sent.from) }
            writes.append(try MessageKeys.storing(key, of: sent.messageID, sender: sent.from, under: senderKey, withEvent: eventID))
        }
        return writes
    }

    /// Caches the `fresh` keys once the append that stored them committed.
    public func remember(_ fresh: FreshMessageKeys) {
        for (message, key) in fresh.keys { messageKeys.remember(message, key: key) }
        for (user, key) in fresh.users { keys.remember(user, key: key) }
    }

    /// The users `events` register (their data keys are new).
    static func registeredUsers(of events: [Event]) -> [UUID] {
        events.compactMap { if case .userRegistered(let e) = $0 { e.userID } else { nil } }
    }

    /// The chat messages `events` send (their keys are new).
    static func sentMessages(of events: [Event]) -> Set<UUID> {
        Set(events.compactMap { if case .messageSent(let e) = $0 { e.messageID } else { nil } })
    }

    // MARK: Opening

    private struct Envelope: Decodable {
        struct Sealed: Decodable {
            var owner: String
            var box: String
        }
        var sealed: Sealed?
    }

    private static let sealedMember = Data(#""sealed""#.utf8)
    private static let envelopeDecoder = JSONDecoder()
    /// How PostgreSQL prints the member (jsonb orders keys by length, so `box` comes first).
    private static let boxPrefix = Array(#""sealed": {"box": ""#.utf8)
    private static let ownerInfix = Array(#"", "owner": ""#.utf8)

    /// The owner and box of a sealed record, nil for a record stored in the clear.
    static func sealed(_ record: RecordedEvent) throws -> (owner: UUID, box: Data)? {
        guard Event.personalTypeNames.contains(record.type) else { return nil }
        if let found = scanSealed(record.data) { return found }
        guard record.data.range(of: sealedMember) != nil else { return nil }
        // Not as PostgreSQL prints it (written by hand?): read it as JSON.
        guard let sealed = try envelopeDecoder.decode(Envelope.self, from: record.data).sealed,
            let owner = UUID(text: sealed.owner), let box = Data(base64Encoded: sealed.box)
        else { throw EventDecodingError.malformed(typeName: record.type, reason: "sealed member without owner or box") }
        return (owner, box)
    }

    /// The sealed member found by its bytes, as jsonb's text output always spells it: every
    /// event a projector reads passes here, and a JSON parse of the whole event just to find
    /// it was a fifth of the projectors' CPU.
    static func scanSealed(_ data: Data) -> (owner: UUID, box: Data)? {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> (owner: UUID, box: Data)? in
            let bytes = raw.bindMemory(to: UInt8.self)
            let prefix = boxPrefix
            guard bytes.count > prefix.count + 64 else { return nil }
            var start = -1
            var index = 0
            while index + prefix.count <= bytes.count {
                if bytes[index] == prefix[0], (0..<prefix.count).allSatisfy({ bytes[index + $0] == prefix[$0] }) {
                    start = index + prefix.count
                    break
                }
                index += 1
            }
            guard start >= 0 else { return nil }
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
            let infix = ownerInfix
            let ownerStart = end + infix.count
            guard ownerStart + 36 < bytes.count, (0..<infix.count).allSatisfy({ bytes[end + $0] == infix[$0] }),
                bytes[ownerStart + 36] == UInt8(ascii: "\""),
                let owner = UUID(
                    text: String(decoding: UnsafeBufferPointer(rebasing: bytes[ownerStart..<(ownerStart + 36)]), as: UTF8.self)
                ),
                let box = Data(base64Encoded: Data(UnsafeBufferPointer(rebasing: bytes[start..<end])))
            else { return nil }
            return (owner, box)
        }
    }

    /// The owners of the sealed records among `records` (users; chat messages are `messages(of:)`).
    public static func owners(of records: some Sequence<RecordedEvent>) throws -> Set<UUID> {
        try ownersAndMessages(of: records).owners
    }

    /// The users and the chat messages whose keys open the sealed records among `records`.
    static func ownersAndMessages(of records: some Sequence<RecordedEvent>) throws -> (owners: Set<UUID>, messages: Set<UUID>) {
        var owners: Set<UUID> = []
        var messages: Set<UUID> = []
        for record in records {
            guard let sealed = try sealed(record) else { continue }
            if Event.messageKeyedTypeNames.contains(record.type) { messages.insert(sealed.owner) } else { owners.insert(sealed.owner) }
        }
        return (owners, messages)
    }

    /// The entries of `owners` and `messages`, in one dictionary (their ids never collide).
    private func entries(owners: Set<UUID>, messages: Set<UUID>, on connection: Connection) throws -> [UUID: DataKeys.Entry] {
        var found = owners.isEmpty ? [:] : try keys.entries(for: owners, creating: false, on: connection)
        if !messages.isEmpty { found.merge(try messageKeys.entries(reading: messages, on: connection)) { $1 } }
        return found
    }

    /// The domain event of `record`, opened with its owner's key among `keys`; `Event.erased`
    /// when the owner's key was destroyed.
    public func event(from record: RecordedEvent, keys: [UUID: DataKeys.Entry]) throws -> Event {
        try event(from: record, sealed: try Self.sealed(record), keys: keys)
    }

    private func event(from record: RecordedEvent, sealed: (owner: UUID, box: Data)?, keys: [UUID: DataKeys.Entry]) throws -> Event {
        guard let (owner, box) = sealed else {
            return try Event.decode(typeName: record.type, schemaVersion: record.schemaVersion, data: record.data)
        }
        switch keys[owner] {
        case nil: throw PersonalDataError.missingKey(owner)
        case .erased where record.type == "message_sent":
            // An unsent or erased message keeps its place, sender and time: its clear part.
            return try Event.decode(typeName: record.type, schemaVersion: record.schemaVersion, data: record.data)
        case .erased: return .erased(ErasedEvent(typeName: record.type, owner: owner))
        case .key(let key):
            guard let sealedBox = try? AES.GCM.SealedBox(combined: box),
                let personal = try? AES.GCM.open(sealedBox, using: key, authenticating: Self.binding(record.type, owner))
            else { throw PersonalDataError.tampered(owner) }
            return try Event.decode(typeName: record.type, schemaVersion: record.schemaVersion, data: Self.merge(record.data, personal))
        }
    }

    /// Remembers events this process just appended (their ids and decided values), so that
    /// `events(from:on:)` returns them without opening and decoding their records.
    public func remember(_ events: some Sequence<(UUID, Event)>) {
        appended.remember(events)
    }

    /// Forgets every remembered event (a key was erased: nothing of it may stay readable here).
    public func forgetRememberedEvents() { appended.forgetAll() }

    /// Forgets every cached user and message key (another process destroyed one).
    public func forgetCachedKeys() {
        keys.forgetCachedKeys()
        messageKeys.forgetCachedKeys()
    }

    /// The domain events of `records`, reading the keys they need on `connection`. Events this
    /// process appended come from memory (`remember(_:)`), each once.
    ///
    /// Records read without their bodies (`EventLog.readFeed(bodies: false)`: empty `data`) are
    /// taken from the events this process appended; the data of those it did not append is read
    /// here, by position.
    public func events(from records: [RecordedEvent], on connection: Connection) throws -> [Event] {
        let known = appended.take(records.map(\.id))
        if !known.contains(where: { $0 == nil }) { return known.map { $0! } }
        var records = records
        let bodiless = records.indices.filter { known[$0] == nil && records[$0].data.isEmpty }
        if !bodiless.isEmpty {
            let data = try EventLog.data(at: bodiless.map { records[$0].position.position }, on: connection)
            for index in bodiless {
                guard let body = data[records[index].position.position] else {
                    throw PersonalDataError.missingEvent(records[index].id)
                }
                records[index].data = body
            }
        }
        // Each record's sealed member is found once, for its owner's key and for opening it.
        let sealed = try zip(records, known).map { record, event in event == nil ? try Self.sealed(record) : nil }
        var owners: Set<UUID> = []
        var messages: Set<UUID> = []
        for (record, found) in zip(records, sealed) {
            guard let found else { continue }
            if Event.messageKeyedTypeNames.contains(record.type) { messages.insert(found.owner) } else { owners.insert(found.owner) }
        }
        let keys = try entries(owners: owners, messages: messages, on: connection)
        return try records.indices.map { index in
            if let event = known[index] { return event }
            return try event(from: records[index], sealed: sealed[index], keys: keys)
        }
    }

    /// The keys `records` need, read on `connection` where not cached.
    public func keys(for records: some Sequence<RecordedEvent>, on connection: Connection) throws -> [UUID: DataKeys.Entry] {
        let (owners, messages) = try Self.ownersAndMessages(of: records)
        return try entries(owners: owners, messages: messages, on: connection)
    }

    /// The keys `records` need, read through `pool` where not cached.
    public func keys(for records: some Sequence<RecordedEvent>, pool: ConnectionPool) async throws -> [UUID: DataKeys.Entry] {
        let (owners, messages) = try Self.ownersAndMessages(of: records)
        var found: [UUID: DataKeys.Entry] = [:]
        for owner in owners { found[owner] = keys.cached(owner) }
        for message in messages { found[message] = messageKeys.cached(message) }
        guard found.count < owners.count + messages.count else { return found }
        let sealer = self
        return try await pool.withConnection { connection in try sealer.entries(owners: owners, messages: messages, on: connection) }
    }

    /// One JSON object of the members of both: the clear part as stored (its `sealed` member is
    /// ignored by the decoder) and the opened personal part. Keys never collide.
    static func merge(_ clear: Data, _ personal: Data) -> Data {
        var out = [UInt8](clear)
        while let last = out.last, last != UInt8(ascii: "}") { out.removeLast() }
        out.removeLast()
        var rest = personal.drop { $0 != UInt8(ascii: "{") }.dropFirst()
        while let first = rest.first, first == UInt8(ascii: " ") { rest = rest.dropFirst() }
        if rest.first != UInt8(ascii: "}") { out.append(UInt8(ascii: ",")) }
        out.append(contentsOf: rest)
        return Data(out)
    }

    /// What a box is bound to: it opens only as the personal part of this event type and owner.
    static func binding(_ typeName: String, _ owner: UUID) -> Data {
        Data("\(typeName) \(owner.lowercasedString)".utf8)
    }
}

/// New chat message keys made for one command, kept across its attempts: a retry seals its
/// message under the same key that its append then stores.
public struct FreshMessageKeys: Sendable {
    var keys: [UUID: SymmetricKey] = [:]
    /// The data keys of users the command registers, stored with their `user_registered`.
    var users: [UUID: SymmetricKey] = [:]

    public init() {}
}
