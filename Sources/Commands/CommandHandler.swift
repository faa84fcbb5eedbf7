import Domain
import EventLog
import Foundation
import Logging
import PersonalData
import Postgres
import UUIDText

/// Turns a command into appended events, safely under concurrency.
///
/// The straight path (`handle` without `inSameTransaction`), per attempt:
/// 1. The streams the command needs, from `StreamCache` when this process knows them (no round
///    trip), else read from the log (one round trip; also where a reused command id is found).
/// 2. `decide`.
/// 3. Append through the log's group commit, with each stream's version as the condition, and
///    in the same transaction read the users whose cards the answer shows (and store a sent
///    chat message's new key: `AppendRequest.guardedRows`).
///
/// A cached state that another process made stale costs nothing but a retry: the append's
/// condition fails and the next attempt reads the log. A refusal, or a decision to change
/// nothing, is only ever given on states read from the log in that attempt, never on the cache
/// alone. On a version conflict the whole attempt runs again: `maxAttempts` times, and past
/// that for as long as `conflictBudget` lasts while conflicts go on (one hot stream, a chat's
/// many senders, lets one append per round trip through; the rest must wait their turn).
///
/// Commands that write another table atomically with their events go the same way: their writes
/// are guarded rows in the append's pipeline (`AppendRequest.guardedRows`), which commit with
/// their own append and write nothing when it does not (a sign-up's session row and data key, a
/// mate request's spent drop token). Only deleting an
/// account, unsending a message and the caller's own `inSameTransaction` writes still run inside
/// one explicit transaction.
///
/// A class: requests, retries and closures pass it around, and each copy of it as a struct
/// retained every one of its fields.
public final class CommandHandler: Sendable {
    public let log: EventLog
    /// How long a walk request stays answerable.
    public let walkTTL: TimeInterval
    public let clock: @Sendable () -> Date
    public let maxAttempts: Int
    /// How long version conflicts may keep a command retrying past `maxAttempts` (straight
    /// path). 30 concurrent sends into one conversation needed up to 30 attempts; 10 answered
    /// `503 conflict` to some of them.
    public let conflictBudget: Duration
    /// States of streams already folded, so a load reads only newer events.
    public let cache: StreamCache
    /// The log's edge for personal data: seals what is appended, opens what is read.
    public let sealer: EventSealer
    /// The pairs of mate requests this process made or looked up (`pairOfRequest`).
    let requestPairs = RequestPairs()
    /// The drop tokens this process issued and has not seen spent: a mate request presenting one
    /// is decided without reading it first.
    let issuedDropTokens = IssuedDropTokens()
    /// Hot streams' commands, one at a time once one of them conflicted (straight path).
    let turns = StreamTurns()

    public init(
        log: EventLog,
        sealer: EventSealer,
        walkTTL: TimeInterval = SniffMeet.defaultWalkTTL,
        clock: @escaping @Sendable () -> Date = { Date() },
        maxAttempts: Int = 10,
        conflictBudget: Duration = .seconds(2),
        cache: StreamCache = StreamCache()
    ) {
        self.log = log
        self.sealer = sealer
        self.walkTTL = walkTTL
        self.clock = clock
        self.maxAttempts = maxAttempts
        self.conflictBudget = conflictBudget
        self.cache = cache
    }

    /// Handles `command`. `inSameTransaction` runs after the append and commits with it (the
    /// gateway stores a new user's auth token this way).
    public func handle(
        _ command: Command,
        metadata: CommandMetadata,
        inSameTransaction: (@Sendable (Connection) throws -> Void)? = nil
    ) async throws -> CommandOutcome {
        // Deleting an account also destroys its key and drop tokens: one explicit transaction.
        // So does unsending a message: its key goes with the `message_unsent` event.
        let ownTransaction =
            switch command {
            case .deleteAccount, .unsendMessage: true
            default: false
            }
        guard inSameTransaction == nil, !ownTransaction else {
            return try await attempt(command, metadata: metadata, inSameTransaction: inSameTransaction)
        }
        return try await straight(command, metadata: metadata)
    }

    /// Handles `command` through group commit with `sideWrites`: rows of other tables that
    /// commit with its append, in its transaction and round trip, and only if it wrote, each
    /// guarded by an event of the append (`GuardedRow`); `sideWrites` is given the append's
    /// first event id. A command that appends nothing writes none of them.
    public func handle(
        _ command: Command,
        metadata: CommandMetadata,
        sideWrites: @escaping @Sendable (_ firstEventID: UUID) -> [GuardedRow]
    ) async throws -> CommandOutcome {
        try await straight(command, metadata: metadata, sideWrites: sideWrites)
    }

    /// RequestMate with the drop token the addressee's phone handed over: the token is read with
    /// the streams (or known, when this process issued it: `IssuedDropTokens`), and spent by a
    /// guarded write in the request's append (group commit). Two requests spending one token at
    /// once: the second's spend fails its transaction (`EventLog.guardFailed`), and it runs
    /// again, where it reads the token spent.
    public func requestMate(
        requestID: UUID = .random(),
        from: UUID,
        to: UUID,
        dropToken: String,
        metadata: CommandMetadata
    ) async throws -> CommandOutcome {
        try await straight(
            .requestMate(requestID: requestID, from: from, to: to, dropToken: nil),
            metadata: metadata,
            presenting: DropTokens.hash(dropToken)
        )
    }

    /// A fresh drop token for `user`'s profile card: valid 5 minutes, single use.
    public func issueDropToken(for user: UUID) async throws -> (token: String, expiresAt: Date) {
        let token = SecretToken.generate()
        let expiresAt = Date(timeIntervalSince1970: (clock().timeIntervalSince1970 + SniffMeet.dropTokenLifetime).rounded(.down))
        let hash = DropTokens.hash(token)
        try await log.pool.withConnection { connection in
            try DropTokens.store(hash: hash, user: user, expiresAt: expiresAt, on: connection)
        }
        issuedDropTokens.issued(hash: hash, by: user, expiresAt: expiresAt)
        return (token, expiresAt)
    }

    /// The pair a mate request belongs to, found in the log (routes carry only the request id).
    public func pairOfRequest(_ requestID: UUID) async throws -> MatePair? {
        if let known = requestPairs.pair(of: requestID) { return known }
        let found = try await log.pool.withConnection { connection -> MatePair? in
            let result = try connection.execute(
                """
                SELECT data->>'from', data->>'to' FROM events
                WHERE event_type = 'mate_requested' AND data->>'request_id' = $1 LIMIT 1
                """,
                [requestID.lowercasedString],
                prepared: true
            )
            guard let row = result.first, let from = UUID(text: try row.string(0)), let to = UUID(text: try row.string(1))
            else { return nil }
            return MatePair(from, to)
        }
        if let found { requestPairs.remember(requestID, found) }
        return found
    }

    /// The current state of streams, folded from the log (for queries the read models can't answer yet).
    public func states(of streams: [StreamName]) async throws -> [StreamName: StreamState] {
        let handler = self
        return try await log.pool.withConnection { connection in try handler.load(streams, on: connection).states }
    }

    /// Pause before running a command again whose commit's outcome was unknown (a failover
    /// takes seconds; the retries end with the last error, a 503, when it lasts).
    static let unknownOutcomePause: Duration = .milliseconds(100)

    // MARK: The straight path

    /// `presenting`: the hash of a RequestMate's drop token, spent with the append. Known to
    /// `issuedDropTokens`, it is taken from there with the cached streams (an acceptance so
    /// decided is checked by the spend); otherwise, and after any refusal or conflict, it is read
    /// with the streams.
    private func straight(
        _ initial: Command,
        metadata: CommandMetadata,
        presenting dropToken: Data? = nil,
        sideWrites: @Sendable (_ firstEventID: UUID) -> [GuardedRow] = { _ in [] }
    ) async throws -> CommandOutcome {
        var command = initial
        var trustCache = true
        var lookForReplay = !metadata.isFirstUse
        var conflicted = ""
        var unknownOutcome: PostgresError?
        let conflictDeadline = ContinuousClock.now + conflictBudget
        var attempts = 0
        var conflicts = 0
        var lastConflicted = false
        var fresh = FreshMessageKeys()
        // The stream this command waited its turn for, if it conflicted on one or found others waiting.
        var turn: StreamName?
        defer { if let turn { turns.leave(turn) } }
        while attempts < maxAttempts || (lastConflicted && ContinuousClock.now < conflictDeadline) {
            attempts += 1
            lastConflicted = false
            let context = DecisionContext(now: clock(), walkTTL: walkTTL)
            var loaded: Loaded
            let fromCache: Bool
            if trustCache, !lookForReplay, let candidate = withIssuedToken(command, dropToken), let known = cached(candidate) {
                (loaded, fromCache, command) = (known, true, candidate)
            } else {
                let handler = self
                let replayOf = lookForReplay ? metadata.commandID : nil
                let unread = command
                let read = try await log.pool.withConnection { connection -> (Loaded, CommandOutcome?, Command) in
                    if let replayOf, let replay = try handler.replay(of: replayOf, on: connection) { return (Loaded(), replay, unread) }
                    // A mate request's token is read in the same round trip as its streams (which
                    // do not depend on it).
                    guard let dropToken else { return (try handler.load(unread, on: connection), nil, unread) }
                    let (loaded, token) = try handler.load(unread, on: connection, alongside: DropTokens.reading(hash: dropToken))
                    return (loaded, nil, Self.presenting(try token.flatMap(DropTokens.presented(from:)), in: unread))
                }
                if let replay = read.1 { return replay }
                (loaded, fromCache, lookForReplay, command) = (read.0, false, false, read.2)
            }
            // Others wait for a stream this command touches: it waits in line too, then decides on
            // what the one before it left in the cache.
            if turn == nil, let held = await turns.enterIfHeld(among: loaded.versions.keys) {
                (turn, trustCache) = (held, true)
                attempts -= 1
                continue
            }
            let decision: Decision
            switch Result(catching: { () throws(DomainError) -> Decision in
                try SniffMeet.decide(command, states: loaded.states, context: context)
            }) {
            case .success(let decided): decision = decided
            case .failure(let refusal):
                // Refuse only on what the log says, not on what this process remembers.
                if fromCache {
                    trustCache = false
                    continue
                }
                throw CommandError.domain(refusal)
            }
            if decision.isEmpty {
                if fromCache {
                    trustCache = false
                    continue
                }
                // A repeated mate request changes nothing but still spends its token: with no
                // append to go with, on its own; a token spent meanwhile is found next attempt.
                if decision.consumesDropToken, let dropToken {
                    let spent = try await log.pool.withConnection { connection in try DropTokens.spend(hash: dropToken, on: connection) }
                    issuedDropTokens.spent(hash: dropToken)
                    guard spent else { continue }
                }
                var unchanged = CommandOutcome(events: [], position: nil, states: loaded.states, replayed: false)
                unchanged.conflicts = conflicts
                unchanged.waitedTurn = turn != nil
                return unchanged
            }
            // Moved out rather than copied: `loaded.states` is not read again on this attempt.
            var states = loaded.states
            loaded.states = [:]
            var versions = loaded.versions
            for (stream, event) in decision.events {
                states[stream] = SniffMeet.evolve(states[stream]!, event)
                versions[stream, default: 0] += 1
            }
            // The answer's cards: the users the command is about, read in the append's transaction
            // after the version this process knows (almost always nothing to read).
            var cards: [StreamName: (state: StreamState, version: Int64)] = [:]
            for user in Self.answerUsers(command, states) {
                let stream = StreamName.user(user)
                guard states[stream] == nil else { continue }
                let known = cache.entry(stream)
                cards[stream] = (known?.state ?? SniffMeet.initialState(of: stream), known?.version ?? 0)
            }
            let result: GroupAppendResult
            let appending: [NewEvent]
            let stored = storedVersions(loaded.versions)
            do {
                let events = decision.events.map(\.event)
                let keys = try await sealer.keys(for: events, pool: log.pool, fresh: &fresh)
                appending = try newEvents(decision, command: command, metadata: metadata, readVersions: stored, keys: keys)
                let eventIDs = EventLog.eventIDs(commandID: metadata.commandID, events: appending)
                var guarded: [GuardedRow] = []
                if decision.consumesDropToken, let dropToken {
                    // The decider accepts a request only with its token presented.
                    guard case .requestMate(_, _, _, let presented?) = command else {
                        preconditionFailure("a mate request without its token")
                    }
                    guarded.append(DropTokens.spending(hash: dropToken, as: presented, withEvent: eventIDs[0]))
                }
                result = try await log.append(
                    AppendRequest(
                        commandID: metadata.commandID,
                        expectations: expectations(stored),
                        events: appending,
                        reads: Dictionary(uniqueKeysWithValues: cards.map { ($0.key.rawValue, $0.value.version) }),
                        // A sent message's key, a new user's key, a session, a spent drop token: stored
                        // with the events, all or nothing.
                        guardedRows: try sealer.guardedRows(for: events, fresh: fresh, keys: keys, eventIDs: eventIDs)
                            + sideWrites(eventIDs[0]) + guarded,
                        // The new keys, and the events this process's projectors read back moments
                        // later (no need to open them again), known before anyone is answered.
                        committed: { [sealer, fresh] appended in
                            sealer.remember(fresh)
                            sealer.remember(zip(appended.eventIDs, events))
                        }
                    )
                )
            } catch EventLogError.versionConflict(let stream, _) {
                conflicted = stream
                trustCache = false
                lastConflicted = true
                conflicts += 1
                let held = turn
                turn = try await afterConflict(
                    on: stored.names.first(where: { $0.value == stream })?.key,
                    holding: turn,
                    conflicts: conflicts
                )
                // In its turn it decides on what the one before it left in the cache.
                if turn != held { trustCache = true }
                continue
            } catch let error as PostgresError where error.isOutcomeUnknown {
                // Maybe committed, maybe not: run again with the command id; a replay finds the
                // first run's events (and answers once the standby has them) or it appends anew.
                unknownOutcome = error
                lookForReplay = true
                try await Task.sleep(for: Self.unknownOutcomePause)
                continue
            }
            if result.appended.replayed {
                // A concurrent run of this command id won: answer with its result.
                lookForReplay = true
                continue
            }
            for (stream, version) in versions { cache.remember(stream, version: version, state: states[stream]!) }
            requestPairs.remember(decision.events)
            if decision.consumesDropToken, let dropToken { issuedDropTokens.spent(hash: dropToken) }
            let readKeys = try await sealer.keys(for: result.reads.values.joined(), pool: log.pool)
            for (stream, known) in cards {
                let events = result.reads[stream.rawValue] ?? []
                let state = try events.reduce(known.state) { SniffMeet.evolve($0, try sealer.event(from: $1, keys: readKeys)) }
                states[stream] = state
                if let last = events.last { cache.remember(stream, version: last.version, state: state) }
            }
            var outcome = CommandOutcome(events: decision.events, position: result.appended.last, states: states, replayed: false)
            outcome.versions = versions
            outcome.conflicts = conflicts
            outcome.waitedTurn = turn != nil
            return outcome
        }
        if let unknownOutcome { throw unknownOutcome }
        throw CommandError.tooManyConflicts(stream: conflicted)
    }

    /// `command` ready to decide without reading a drop token: it presents none (`hash` nil),
    /// or one this process issued (`issuedDropTokens`). Nil when the token must be read.
    private func withIssuedToken(_ command: Command, _ hash: Data?) -> Command? {
        guard let hash else { return command }
        return issuedDropTokens.token(hash: hash).map { Self.presenting($0, in: command) }
    }

    /// `command` (a RequestMate) with the drop token as it was read.
    static func presenting(_ token: PresentedDropToken?, in command: Command) -> Command {
        guard case .requestMate(let requestID, let from, let to, _) = command else { return command }
        return .requestMate(requestID: requestID, from: from, to: to, dropToken: token)
    }

    /// Every stream `command` needs, from the cache alone; nil when one is not there. A stream
    /// the command itself mints (a new walk's id) is known to be empty.
    func cached(_ command: Command) -> Loaded? {
        var loaded = Loaded()
        var names = SniffMeet.streams(for: command, loaded: [:])
        while true {
            let missing = names.filter { loaded.states[$0] == nil }
            if missing.isEmpty { return loaded }
            for name in missing {
                if let known = cache.entry(name) {
                    loaded.states[name] = known.state
                    loaded.versions[name] = known.version
                } else if Self.mints(command, name) {
                    loaded.states[name] = SniffMeet.initialState(of: name)
                    loaded.versions[name] = 0
                } else {
                    return nil
                }
            }
            names = SniffMeet.streams(for: command, loaded: loaded.states)
        }
    }

    /// True for the stream a command creates under an id made for it (SendWalk's walk): nothing
    /// can be in it yet, and the append's condition (version 0) says so if it were.
    ///
    /// A sign-up mints its user's stream (the id is new), and presumes its nickname's stream
    /// empty when this process knows nothing of it: the append's condition (version 0) holds
    /// exactly when nobody ever reserved the nickname; otherwise it fails as a conflict and the
    /// next attempt reads the stream, where a taken nickname is refused. A sign-up then costs one
    /// round trip, its append, instead of a read before it. A mate request presumes the same of
    /// its pair's stream (two owners who just swapped cards have most often never asked before).
    static func mints(_ command: Command, _ stream: StreamName) -> Bool {
        if case .registerUser(let userID, let profile) = command { return stream == .user(userID) || stream == .nickname(profile.nickname) }
        if case .requestMate(_, let from, let to, _) = command { return stream == .mates(from, to) }
        if case .sendWalk(let walkID, _, _, _, _, _, _) = command { return stream == .walk(walkID) }
        if case .recordWalkLog(let walkLogID, _, _, _, _) = command { return stream == .walkLog(walkLogID) }
        return false
    }

    /// The users whose cards the answer to `command` shows.
    static func answerUsers(_ command: Command, _ states: [StreamName: StreamState]) -> [UUID] {
        switch command {
        case .requestMate(_, let from, let to, _), .sendWalk(_, let from, let to, _, _, _, _): return [from, to]
        case .acceptMate(_, let pair, _), .declineMate(_, let pair, _), .cancelMateRequest(_, let pair, _): return [pair.lo, pair.hi]
        case .unpair(let by, let mate): return [by, mate]
        case .respondWalk(let walkID, _, _), .cancelWalk(let walkID, _), .expireWalk(let walkID):
            guard let walk = states[.walk(walkID)]?.walk, let from = walk.from, let to = walk.to else { return [] }
            return [from, to]
        case .registerUser, .updateProfile, .dismissNotification, .deleteAccount, .clearNotifications, .block, .unblock, .report,
            .resolveReport, .suspendUser, .unsuspendUser, .sendMessage, .editMessage, .unsendMessage, .reclaimNickname:
            return []
        case .recordWalkLog(_, let owner, _, _, _): return [owner]
        case .changeWalkLogVisibility(_, let by, _), .deleteWalkLog(_, let by): return [by]
        }
    }

    /// The streams the decision read with their versions, under the names the log stores: each
    /// name made once per attempt (a nickname stream's is an HMAC, which the conditions, the
    /// metadata and the events each asked for again: 1.5 % of a sign-up's server CPU).
    struct StoredVersions {
        var names: [StreamName: String] = [:]
        var versions: [String: Int64] = [:]
    }

    func storedVersions(_ versions: [StreamName: Int64]) -> StoredVersions {
        var stored = StoredVersions()
        stored.names.reserveCapacity(versions.count)
        stored.versions.reserveCapacity(versions.count)
        for (stream, version) in versions {
            let name = sealer.storedName(stream)
            stored.names[stream] = name
            stored.versions[name] = version
        }
        return stored
    }

    /// Every stream the decision was based on, at the version it was read: the append's conditions.
    func expectations(_ stored: StoredVersions) -> [String: ExpectedVersion] {
        stored.versions.mapValues(ExpectedVersion.version)
    }

    /// The decision's events as the log stores them: personal parts sealed under the `keys` of
    /// their owners, nickname streams under their keyed names.
    func newEvents(
        _ decision: Decision,
        command: Command,
        metadata: CommandMetadata,
        readVersions stored: StoredVersions,
        keys: [UUID: DataKeys.Entry]
    ) throws -> [NewEvent] {
        try decision.events.map { item in
            NewEvent(
                stream: stored.names[item.stream] ?? sealer.storedName(item.stream),
                type: item.event.typeName,
                data: try sealer.data(of: item.event, keys: keys),
                metadata: metadata.json(command: command.name, schemaVersion: item.event.schemaVersion, readVersions: stored.versions)
            )
        }
    }

    // MARK: In one transaction

    private func attempt(
        _ command: Command,
        metadata: CommandMetadata,
        inSameTransaction: (@Sendable (Connection) throws -> Void)?
    ) async throws -> CommandOutcome {
        var conflicted = ""
        var conflicts = 0
        var unknownOutcome: PostgresError?
        // As on the straight path: after a conflict, or while others wait for a stream it names,
        // the command takes its turn on that stream (an unsend in a busy conversation).
        let named = SniffMeet.streams(for: command, loaded: [:])
        var turn: StreamName?
        defer { if let turn { turns.leave(turn) } }
        for _ in 0..<maxAttempts {
            if turn == nil { turn = await turns.enterIfHeld(among: named) }
            do {
                let now = clock()
                let ttl = walkTTL
                let handler = self
                let unknown = unknownOutcome != nil
                var outcome = try await log.pool.withConnection { connection in
                    try connection.transaction { connection in
                        if !metadata.isFirstUse || unknown, let replay = try handler.replay(of: metadata.commandID, on: connection) {
                            return replay
                        }
                        let loaded = try handler.load(command, on: connection)
                        let decision: Decision
                        switch Result(catching: { () throws(DomainError) -> Decision in
                            try SniffMeet.decide(command, states: loaded.states, context: DecisionContext(now: now, walkTTL: ttl))
                        }) {
                        case .success(let decided): decision = decided
                        case .failure(let refusal): throw CommandError.domain(refusal)
                        }
                        var appended: AppendResult?
                        if !decision.isEmpty {
                            let stored = handler.storedVersions(loaded.versions)
                            let expectations = handler.expectations(stored)
                            let owners = EventSealer.owners(of: decision.events.map(\.event))
                            var keys = owners.isEmpty ? [:] : try handler.sealer.keys.entries(for: owners, creating: true, on: connection)
                            let messages = EventSealer.messages(of: decision.events.map(\.event))
                            if !messages.isEmpty {
                                keys.merge(try handler.sealer.messageKeys.entries(for: messages, creating: true, on: connection)) { $1 }
                            }
                            appended = try EventLog.append(
                                on: connection,
                                commandID: metadata.commandID,
                                expectations: expectations,
                                events: handler.newEvents(
                                    decision,
                                    command: command,
                                    metadata: metadata,
                                    readVersions: stored,
                                    keys: keys
                                )
                            )
                            // A deleted account's key goes in the same transaction as its
                            // `user_deleted`, and so do its drop tokens (DESIGN.md, erasure).
                            for case (_, .userDeleted(let deleted)) in decision.events {
                                try handler.sealer.keys.erase(deleted.userID, on: connection)
                                try handler.sealer.messageKeys.eraseAll(of: deleted.userID, on: connection)
                                try DropTokens.deleteAll(of: deleted.userID, on: connection)
                            }
                            // An unsent message's key goes with its `message_unsent` (API.md, chat).
                            for case (_, .messageUnsent(let unsent)) in decision.events {
                                try handler.sealer.messageKeys.erase(unsent.messageID, on: connection)
                            }
                        }
                        try inSameTransaction?(connection)
                        var states = loaded.states
                        var versions = loaded.versions
                        for (stream, event) in decision.events {
                            states[stream] = SniffMeet.evolve(states[stream]!, event)
                            versions[stream, default: 0] += 1
                        }
                        var outcome = CommandOutcome(
                            events: decision.events,
                            position: appended?.last,
                            states: states,
                            replayed: appended?.replayed ?? false
                        )
                        outcome.versions = versions
                        return outcome
                    }
                }
                if outcome.position != nil && !outcome.replayed { log.announceCommitted() }
                for case (_, .userDeleted(let deleted)) in outcome.events {
                    sealer.keys.forget(deleted.userID)
                    sealer.messageKeys.forgetCachedKeys()
                    sealer.forgetRememberedEvents()
                }
                for case (_, .messageUnsent(let unsent)) in outcome.events {
                    sealer.messageKeys.forget(unsent.messageID)
                    sealer.forgetRememberedEvents()
                }
                // Committed: the states after the append are those streams at their new versions.
                if !outcome.replayed {
                    for (stream, version) in outcome.versions { cache.remember(stream, version: version, state: outcome.states[stream]!) }
                }
                outcome.conflicts = conflicts
                outcome.waitedTurn = turn != nil
                return outcome
            } catch EventLogError.versionConflict(let stream, _) {
                conflicted = stream
                conflicts += 1
                turn = try await afterConflict(
                    on: named.first(where: { sealer.storedName($0) == stream }),
                    holding: turn,
                    conflicts: conflicts
                )
                continue
            } catch EventLogError.alreadyAppended {
                // A concurrent run of this command id won; the next attempt returns its result.
                continue
            } catch let error as PostgresError where error.isOutcomeUnknown {
                // The COMMIT's outcome is unknown: the next attempt looks for this command's events first.
                unknownOutcome = error
                try await Task.sleep(for: Self.unknownOutcomePause)
                continue
            }
        }
        if let unknownOutcome { throw unknownOutcome }
        throw CommandError.tooManyConflicts(stream: conflicted)
    }

    /// After a version conflict on `stream` (nil when it is none the command names): a command
    /// that holds no turn waits for its turn there, and holds it (returned). Its turn comes once
    /// those before it appended: no conflict then, but for another process's appends. One that
    /// conflicts again pauses briefly at random, or concurrent losers would all come back in the
    /// same batch again.
    private func afterConflict(on stream: StreamName?, holding turn: StreamName?, conflicts: Int) async throws -> StreamName? {
        if turn == nil, let stream {
            await turns.enter(stream)
            return stream
        }
        if conflicts > 1 { try await Task.sleep(for: .microseconds(Int.random(in: 0...(100 * min(conflicts, 20))))) }
        return turn
    }

    /// The first result of a command id that already appended, or nil.
    func replay(of commandID: UUID, on connection: Connection) throws -> CommandOutcome? {
        // A command appends at most a handful of events; their ids derive from the command id.
        let ids = EventLog.eventIDs(commandID: commandID, count: 16)
        let result = try connection.execute(
            "SELECT \(EventLog.columns) FROM events WHERE event_id = ANY($1) ORDER BY transaction_id, position",
            [ids]
        )
        guard result.count > 0 else { return nil }
        // Found on a retry: its first commit may be on the primary alone (its wait for the
        // standby cut); answer only once a later write of ours is on the standby.
        try EventLog.confirmReplicated(on: connection)
        let recorded = try result.rows.map(EventLog.decodeEvent)
        let keys = try sealer.keys(for: recorded, on: connection)
        var events: [(stream: StreamName, event: Event)] = []
        for event in recorded {
            guard let stream = StreamName(rawValue: event.stream) else { continue }
            events.append((stream, try sealer.event(from: event, keys: keys)))
        }
        // Nickname streams are stored under keyed names, which cannot be loaded back by name;
        // no answer shows them.
        var seen: [StreamName] = []
        for event in events where !seen.contains(event.stream) && event.stream.kind != .nickname { seen.append(event.stream) }
        let states = try load(seen, on: connection).states
        return CommandOutcome(events: events, position: recorded.last?.position, states: states, replayed: true)
    }

    struct Loaded {
        var states: [StreamName: StreamState] = [:]
        var versions: [StreamName: Int64] = [:]
    }

    /// Loads every stream `command` needs, asking the domain again until the list is complete.
    func load(_ command: Command, on connection: Connection) throws -> Loaded {
        try load(command, on: connection, alongside: nil).loaded
    }

    /// Loads as `load(_:on:)`, running `extra` in the same round trip as the first read.
    func load(
        _ command: Command,
        on connection: Connection,
        alongside extra: Connection.Statement?
    ) throws -> (loaded: Loaded, extra: QueryResult?) {
        var loaded = Loaded()
        var extraResult: QueryResult?
        var pending = extra
        var names = SniffMeet.streams(for: command, loaded: [:])
        while true {
            let missing = names.filter { loaded.states[$0] == nil }
            if missing.isEmpty {
                if let pending { extraResult = try connection.execute(pending) }
                return (loaded, extraResult)
            }
            let more: Loaded
            if let statement = pending {
                (more, extraResult) = try load(missing, on: connection, alongside: statement)
                pending = nil
            } else {
                more = try load(missing, on: connection)
            }
            loaded.states.merge(more.states) { $1 }
            loaded.versions.merge(more.versions) { $1 }
            names = SniffMeet.streams(for: command, loaded: loaded.states)
        }
    }

    /// The streams' states: each cached state brought up to date with the events after it, the
    /// others folded from the start. Everything read is committed, so it is cached too.
    func load(_ names: [StreamName], on connection: Connection) throws -> Loaded {
        try load(names, on: connection, alongside: nil).loaded
    }

    /// Loads as `load(_:on:)`, with `extra` pipelined before the read (one round trip).
    func load(
        _ names: [StreamName],
        on connection: Connection,
        alongside extra: Connection.Statement?
    ) throws -> (loaded: Loaded, extra: QueryResult?) {
        var loaded = Loaded()
        var after: [String: Int64] = [:]
        for name in names {
            let known = cache.entry(name)
            loaded.states[name] = known?.state ?? SniffMeet.initialState(of: name)
            loaded.versions[name] = known?.version ?? 0
            after[sealer.storedName(name)] = known?.version ?? 0
        }
        let recorded: [String: [RecordedEvent]]
        var extraResult: QueryResult?
        if let extra {
            let results = try connection.pipeline([extra, EventLog.readStreamsStatement(after: after)])
            extraResult = results[0]
            recorded = try EventLog.streams(from: results[1], asked: after)
        } else {
            recorded = try EventLog.readStreams(on: connection, after: after)
        }
        let keys = try sealer.keys(for: recorded.values.joined(), on: connection)
        for name in names {
            let events = recorded[sealer.storedName(name)] ?? []
            guard let last = events.last else { continue }
            loaded.states[name] = try events.reduce(loaded.states[name]!) { SniffMeet.evolve($0, try sealer.event(from: $1, keys: keys)) }
            loaded.versions[name] = last.version
            cache.remember(name, version: last.version, state: loaded.states[name]!)
        }
        return (loaded, extraResult)
    }
}
