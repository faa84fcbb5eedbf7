@preconcurrency import Crypto
import Domain
import EventLog
import Foundation
import PersonalData
import UUIDText

/// A reproducible random stream of SniffMeet commands, decided by the domain's own deciders
/// against an in-memory copy of the log, for tests and benchmarks. It keeps every stream's
/// folded state and version, so its appends carry exact expected versions (a single writer).
public struct SyntheticWorkload: Sendable {
    /// One decided command, ready to append.
    public struct Step: Sendable {
        public var command: Command
        public var commandID: UUID
        public var expectations: [String: ExpectedVersion]
        public var events: [NewEvent]
        public var decided: [(stream: StreamName, event: Event)]
    }

    public private(set) var states: [StreamName: StreamState] = [:]
    public private(set) var versions: [StreamName: Int64] = [:]
    /// Notification ids (event ids) per recipient that were not dismissed.
    public private(set) var inbox: [UUID: [UUID]] = [:]
    public private(set) var now: Date
    public private(set) var refused = 0

    private var rng: SplitMix64
    private let userCount: Int
    private let walkTTL: TimeInterval
    private let nicknamePrefix: String
    private var users: [UUID] = []
    private var pairs: [MatePair] = []
    private var knownPairs: Set<MatePair> = []
    private var walks: [UUID] = []
    private var reports: [(id: UUID, reported: UUID)] = []
    /// Seals personal parts and names nickname streams as the server does, when set.
    private let sealer: EventSealer?
    private var keys: [UUID: DataKeys.Entry] = [:]
    /// Data keys made since `takeNewKeys()` last ran: their rows must reach `data_keys` with the events.
    private var newKeys: [(user: UUID, key: SymmetricKey)] = []

    /// `users` owners sign up first; then mates, walks, answers, unpairings, profile changes
    /// and dismissals follow at random. Time advances 20 ms per command from `start`.
    /// Several workloads can share one log when their `nicknamePrefix`es differ (nicknames
    /// are unique across the log; they are the prefix and a number, at most 8 characters).
    public init(
        seed: UInt64,
        users: Int = 60,
        walkTTL: TimeInterval = 5,
        nicknamePrefix: String = "u",
        start: Date = Date(timeIntervalSince1970: 1_800_000_000),
        sealer: EventSealer? = nil
    ) {
        self.sealer = sealer
        self.nicknamePrefix = nicknamePrefix
        self.rng = SplitMix64(seed: seed)
        self.userCount = max(users, 2)
        self.walkTTL = walkTTL
        self.now = start
    }

    /// The next command the domain accepts (refused ones are counted and skipped), with its
    /// events; the in-memory state already includes them.
    public mutating func next() -> Step {
        while true {
            now = now.addingTimeInterval(0.02)
            let command = pickCommand()
            let names = loadedStreams(for: command)
            let loaded = Dictionary(uniqueKeysWithValues: names.map { ($0, states[$0] ?? SniffMeet.initialState(of: $0)) })
            do {
                let decision = try SniffMeet.decide(command, states: loaded, context: DecisionContext(now: now, walkTTL: walkTTL))
                if decision.isEmpty { continue }
                return record(command, decision: decision, loaded: names)
            } catch {
                refused += 1
            }
        }
    }

    private func loadedStreams(for command: Command) -> [StreamName] {
        var loaded: [StreamName: StreamState] = [:]
        while true {
            let names = SniffMeet.streams(for: command, loaded: loaded)
            let missing = names.filter { loaded[$0] == nil }
            if missing.isEmpty { return names }
            for name in missing { loaded[name] = states[name] ?? SniffMeet.initialState(of: name) }
        }
    }

    private mutating func record(_ command: Command, decision: Decision, loaded: [StreamName]) -> Step {
        let commandID = randomUUID()
        var expectations: [String: ExpectedVersion] = [:]
        for name in loaded { expectations[storedName(name)] = .version(versions[name] ?? 0) }
        var events: [NewEvent] = []
        // The log stores a command's events under ids derived from the command id.
        let ids = EventLog.eventIDs(commandID: commandID, count: decision.events.count)
        for (index, (stream, event)) in decision.events.enumerated() {
            let id = ids[index]
            let metadata = #"{"command_id":"\#(commandID.lowercasedString)","schema_version":\#(event.schemaVersion)}"#
            events.append(
                NewEvent(
                    stream: storedName(stream),
                    id: id,
                    type: event.typeName,
                    data: data(of: event),
                    metadata: Data(metadata.utf8)
                )
            )
            states[stream] = SniffMeet.evolve(states[stream] ?? SniffMeet.initialState(of: stream), event)
            versions[stream, default: 0] += 1
            track(event, id: id)
        }
        return Step(command: command, commandID: commandID, expectations: expectations, events: events, decided: decision.events)
    }

    private func storedName(_ stream: StreamName) -> String { sealer?.storedName(stream) ?? stream.rawValue }

    /// The event as the log stores it: sealed under its owner's key (made on first use) when sealing.
    private mutating func data(of event: Event) -> Data {
        guard let sealer, let owner = event.personalDataOwner else { return event.encodedData() }
        if keys[owner] == nil {
            let key = SymmetricKey(size: .bits256)
            keys[owner] = .key(key)
            newKeys.append((owner, key))
        }
        // Only a missing or erased key can fail, and every owner has one here.
        return try! sealer.data(of: event, keys: keys)
    }

    /// The `data_keys` rows (user id, sealed key as hex) of keys made since the last call.
    public mutating func takeNewKeys() -> [(user: UUID, sealedKey: String)] {
        guard let sealer else { return [] }
        defer { newKeys = [] }
        return newKeys.map { ($0.user, sealer.keys.sealedHex($0.key, of: $0.user)) }
    }

    /// Keeps the lists the picker draws from, and the expected inboxes.
    private mutating func track(_ event: Event, id: UUID) {
        switch event {
        case .userRegistered(let e): users.append(e.userID)
        case .mateRequested(let e):
            let pair = MatePair(e.from, e.to)
            if knownPairs.insert(pair).inserted { pairs.append(pair) }
            inbox[e.to, default: []].append(id)
        case .mateAccepted(let e): inbox[e.from, default: []].append(id)
        case .walkRequested(let e):
            walks.append(e.walkID)
            inbox[e.to, default: []].append(id)
        case .walkAccepted(let e), .walkDeclined(let e), .walkExpired(let e): inbox[e.from, default: []].append(id)
        case .notificationDismissed(let e): inbox[e.userID]?.removeAll { $0 == e.notificationID }
        case .notificationsCleared(let e): inbox[e.userID] = []
        case .userReported(let e): reports.append((e.reportID, e.reported))
        default: break
        }
    }

    private mutating func pickCommand() -> Command {
        if users.count < userCount {
            let index = users.count
            return .registerUser(
                userID: randomUUID(),
                profile: DogProfile(
                    nickname: "\(nicknamePrefix)\(index)",
                    dogName: "Dog \(index)",
                    age: index % 15,
                    sex: index % 2 == 0 ? .male : .female,
                    neutered: index % 3 == 0,
                    size: Size.allCases[index % 3],
                    keywords: [Keyword.allCases[index % 5]]
                )
            )
        }
        let roll = rng.next(100)
        switch roll {
        case 0..<4:
            let user = pick(users)
            return .updateProfile(userID: user, changes: ProfileChanges(dogName: "Dog \(rng.next(1000))", age: Int(rng.next(20))))
        case 4..<25:
            let from = pick(users)
            let to = pick(users)
            let token = PresentedDropToken(issuedBy: to, expiresAt: now.addingTimeInterval(300), used: false)
            return .requestMate(requestID: randomUUID(), from: from, to: to, dropToken: token)
        case 25..<45:
            guard !pairs.isEmpty else { return .unpair(by: pick(users), mate: pick(users)) }
            let pair = pick(pairs)
            let mates = states[.mates(pair)]?.mates ?? .initial
            if case .pending(let id, let from, let to) = mates.status {
                switch rng.next(10) {
                case 0..<6: return .acceptMate(requestID: id, pair: pair, by: to)
                case 6..<8: return .declineMate(requestID: id, pair: pair, by: to)
                default: return .cancelMateRequest(requestID: id, pair: pair, by: from)
                }
            }
            return .unpair(by: rng.next(2) == 0 ? pair.lo : pair.hi, mate: rng.next(2) == 0 ? pair.hi : pair.lo)
        case 45..<70:
            guard !pairs.isEmpty else { return .unpair(by: pick(users), mate: pick(users)) }
            let pair = pick(pairs)
            let (from, to) = rng.next(2) == 0 ? (pair.lo, pair.hi) : (pair.hi, pair.lo)
            return .sendWalk(
                walkID: randomUUID(),
                from: from,
                to: to,
                message: "Walk \(rng.next(100))?",
                latitude: Double(rng.next(18000)) / 100 - 90,
                longitude: Double(rng.next(36000)) / 100 - 180,
                placeName: rng.next(3) == 0 ? nil : "Park \(rng.next(50))"
            )
        case 70..<92:
            guard !walks.isEmpty else { return .expireWalk(walkID: randomUUID()) }
            // Mostly recent walks, so answers come before the deadline.
            let walkID = walks[max(0, walks.count - 1 - Int(rng.next(UInt64(min(walks.count, 40)))))]
            guard let walk = states[.walk(walkID)]?.walk?.request else { return .expireWalk(walkID: walkID) }
            switch rng.next(10) {
            case 0..<5: return .respondWalk(walkID: walkID, by: walk.to, answer: .accept)
            case 5..<8: return .respondWalk(walkID: walkID, by: walk.to, answer: .decline)
            default: return .cancelWalk(walkID: walkID, by: walk.from)
            }
        case 92..<96:
            guard !walks.isEmpty else { return .expireWalk(walkID: randomUUID()) }
            return .expireWalk(walkID: pick(walks))
        case 98..<100:
            return pickSafetyCommand()
        default:
            let user = pick(users)
            guard let entries = inbox[user], !entries.isEmpty else {
                return .dismissNotification(userID: user, notificationID: randomUUID())
            }
            return .dismissNotification(userID: user, notificationID: pick(entries))
        }
    }

    /// Blocks and unblocks between users who met, reports and their resolution, suspensions and
    /// emptied inboxes: rare, as in the app, but in every workload, so that every read model has rows.
    private mutating func pickSafetyCommand() -> Command {
        let user = pick(users)
        switch rng.next(8) {
        case 0, 1:
            guard !pairs.isEmpty else { return .clearNotifications(userID: user) }
            let pair = pick(pairs)
            let (by, other) = rng.next(2) == 0 ? (pair.lo, pair.hi) : (pair.hi, pair.lo)
            if states[.mates(pair)]?.mates?.blockedBy.contains(by) == true { return .unblock(by: by, user: other) }
            return .block(by: by, user: other, walks: [])
        case 2, 3:
            guard !pairs.isEmpty else { return .clearNotifications(userID: user) }
            let pair = pick(pairs)
            let reasons = ReportReason.allCases
            return .report(
                reportID: randomUUID(),
                reporter: pair.lo,
                reported: pair.hi,
                reason: reasons[Int(rng.next(UInt64(reasons.count)))],
                walkID: nil,
                note: rng.next(2) == 0 ? nil : "Report \(rng.next(100))"
            )
        case 4:
            guard !reports.isEmpty else { return .clearNotifications(userID: user) }
            let report = pick(reports)
            return .resolveReport(reportID: report.id, reported: report.reported)
        case 5:
            let suspended = states[.user(user)]?.user?.isSuspended == true
            return suspended ? .unsuspendUser(userID: user) : .suspendUser(userID: user, reason: "Spam", partners: [], walks: [])
        default:
            return .clearNotifications(userID: user)
        }
    }

    private mutating func pick<T>(_ items: [T]) -> T { items[Int(rng.next(UInt64(items.count)))] }

    private mutating func randomUUID() -> UUID {
        let a = rng.nextUInt64()
        let b = rng.nextUInt64()
        var bytes = (
            UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0),
            UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0)
        )
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: a, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: b, toByteOffset: 8, as: UInt64.self)
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
        }
        return UUID(uuid: bytes)
    }
}

/// A tiny deterministic generator (SplitMix64): the same seed gives the same workload.
struct SplitMix64: Sendable {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func nextUInt64() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform enough in 0..<bound for a workload.
    mutating func next(_ bound: UInt64) -> UInt64 { bound == 0 ? 0 : nextUInt64() % bound }
}
