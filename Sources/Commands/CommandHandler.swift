import Domain
import EventLog
import Foundation
import Logging
import Postgres

/// Turns a command into appended events, safely under concurrency.
///
/// Per attempt, in one transaction: load every stream the command needs (folding its events),
/// `decide`, append with the versions read as conditions. When another writer moved one of
/// those streams in between, the append fails with a version conflict and the whole attempt
/// runs again on fresh state, a bounded number of times.
public struct CommandHandler: Sendable {
    public let log: EventLog
    /// How long a walk request stays answerable.
    public let walkTTL: TimeInterval
    public let clock: @Sendable () -> Date
    public let maxAttempts: Int
    /// States of streams already folded, so a load reads only newer events.
    public let cache: StreamCache

    public init(log: EventLog, walkTTL: TimeInterval = SniffMeet.defaultWalkTTL,
                clock: @escaping @Sendable () -> Date = { Date() }, maxAttempts: Int = 10, cache: StreamCache = StreamCache()) {
        self.log = log
        self.walkTTL = walkTTL
        self.clock = clock
        self.maxAttempts = maxAttempts
        self.cache = cache
    }

    /// Handles `command`. `inSameTransaction` runs after the append and commits with it (the
    /// gateway stores a new user's auth token this way).
    public func handle(_ command: Command, metadata: CommandMetadata,
                       inSameTransaction: (@Sendable (Connection) throws -> Void)? = nil) async throws -> CommandOutcome {
        try await attempt(metadata: metadata, inSameTransaction: inSameTransaction) { _ in (command, nil) }
    }

    /// RequestMate with the drop token the addressee's phone handed over: the token is checked,
    /// locked and spent in the same transaction as the request's events.
    public func requestMate(requestID: UUID = UUID(), from: UUID, to: UUID, dropToken: String,
                            metadata: CommandMetadata) async throws -> CommandOutcome {
        let hash = DropTokens.hash(dropToken)
        return try await attempt(metadata: metadata, inSameTransaction: nil) { connection in
            let presented = try DropTokens.presented(hash: hash, on: connection)
            return (.requestMate(requestID: requestID, from: from, to: to, dropToken: presented), hash)
        }
    }

    /// A fresh drop token for `user`'s profile card: valid 5 minutes, single use.
    public func issueDropToken(for user: UUID) async throws -> (token: String, expiresAt: Date) {
        let token = SecretToken.generate()
        let expiresAt = Date(timeIntervalSince1970: (clock().timeIntervalSince1970 + SniffMeet.dropTokenLifetime).rounded(.down))
        try await log.pool.withConnection { connection in
            try DropTokens.store(hash: DropTokens.hash(token), user: user, expiresAt: expiresAt, on: connection)
        }
        return (token, expiresAt)
    }

    /// The pair a mate request belongs to, found in the log (routes carry only the request id).
    public func pairOfRequest(_ requestID: UUID) async throws -> MatePair? {
        try await log.pool.withConnection { connection in
            let result = try connection.execute("""
                SELECT data->>'from', data->>'to' FROM events
                WHERE event_type = 'mate_requested' AND data->>'request_id' = $1 LIMIT 1
                """, [requestID.uuidString.lowercased()])
            guard let row = result.first, let from = UUID(uuidString: try row.string(0)), let to = UUID(uuidString: try row.string(1))
            else { return nil }
            return MatePair(from, to)
        }
    }

    /// The current state of streams, folded from the log (for queries the read models can't answer yet).
    public func states(of streams: [StreamName]) async throws -> [StreamName: StreamState] {
        let handler = self
        return try await log.pool.withConnection { connection in try handler.load(streams, on: connection).states }
    }

    // MARK: The loop

    private func attempt(metadata: CommandMetadata, inSameTransaction: (@Sendable (Connection) throws -> Void)?,
                         build: @escaping @Sendable (Connection) throws -> (Command, Data?)) async throws -> CommandOutcome {
        var conflicted = ""
        for _ in 0..<maxAttempts {
            do {
                let now = clock()
                let ttl = walkTTL
                let handler = self
                let outcome = try await log.pool.withConnection { connection in
                    try connection.transaction { connection in
                        if !metadata.isFirstUse, let replay = try handler.replay(of: metadata.commandID, on: connection) { return replay }
                        let (command, tokenHash) = try build(connection)
                        let loaded = try handler.load(command, on: connection)
                        let decision: Decision
                        switch Result(catching: { () throws(DomainError) -> Decision in
                            try SniffMeet.decide(command, states: loaded.states, context: DecisionContext(now: now, walkTTL: ttl))
                        }) {
                        case .success(let decided): decision = decided
                        case .failure(let refusal): throw CommandError.domain(refusal)
                        }
                        if decision.consumesDropToken, let tokenHash { try DropTokens.spend(hash: tokenHash, on: connection) }
                        var appended: AppendResult?
                        if !decision.isEmpty {
                            var expectations: [String: ExpectedVersion] = [:]
                            var readVersions: [String: Int64] = [:]
                            for (stream, version) in loaded.versions {
                                expectations[stream.rawValue] = .version(version)
                                readVersions[stream.rawValue] = version
                            }
                            let events = decision.events.map { item in
                                NewEvent(stream: item.stream.rawValue, type: item.event.typeName, data: item.event.encodedData(),
                                         metadata: metadata.json(command: command.name, schemaVersion: item.event.schemaVersion,
                                                                 readVersions: readVersions))
                            }
                            appended = try EventLog.append(on: connection, commandID: metadata.commandID,
                                                           expectations: expectations, events: events)
                        }
                        try inSameTransaction?(connection)
                        var states = loaded.states, versions = loaded.versions
                        for (stream, event) in decision.events {
                            states[stream] = SniffMeet.evolve(states[stream]!, event)
                            versions[stream, default: 0] += 1
                        }
                        var outcome = CommandOutcome(events: decision.events, position: appended?.last, states: states,
                                                     replayed: appended?.replayed ?? false)
                        outcome.versions = versions
                        return outcome
                    }
                }
                if outcome.position != nil && !outcome.replayed { log.announceCommitted() }
                // Committed: the states after the append are those streams at their new versions.
                if !outcome.replayed {
                    for (stream, version) in outcome.versions { cache.remember(stream, version: version, state: outcome.states[stream]!) }
                }
                return outcome
            } catch EventLogError.versionConflict(let stream, _) {
                conflicted = stream
                continue
            } catch EventLogError.alreadyAppended {
                // A concurrent run of this command id won; the next attempt returns its result.
                continue
            }
        }
        throw CommandError.tooManyConflicts(stream: conflicted)
    }

    /// The first result of a command id that already appended, or nil.
    func replay(of commandID: UUID, on connection: Connection) throws -> CommandOutcome? {
        // A command appends at most a handful of events; their ids derive from the command id.
        let ids = EventLog.eventIDs(commandID: commandID, count: 16)
        let result = try connection.execute(
            "SELECT \(EventLog.columns) FROM events WHERE event_id = ANY($1) ORDER BY transaction_id, position", [ids])
        guard result.count > 0 else { return nil }
        let recorded = try result.rows.map(EventLog.decodeEvent)
        var events: [(stream: StreamName, event: Event)] = []
        for event in recorded {
            guard let stream = StreamName(rawValue: event.stream) else { continue }
            events.append((stream, try event.domainEvent()))
        }
        var seen: [StreamName] = []
        for event in events where !seen.contains(event.stream) { seen.append(event.stream) }
        let states = try load(seen, on: connection).states
        return CommandOutcome(events: events, position: recorded.last?.position, states: states, replayed: true)
    }

    struct Loaded {
        var states: [StreamName: StreamState] = [:]
        var versions: [StreamName: Int64] = [:]
    }

    /// Loads every stream `command` needs, asking the domain again until the list is complete.
    func load(_ command: Command, on connection: Connection) throws -> Loaded {
        var loaded = Loaded()
        var names = SniffMeet.streams(for: command, loaded: [:])
        while true {
            let missing = names.filter { loaded.states[$0] == nil }
            if missing.isEmpty { return loaded }
            let more = try load(missing, on: connection)
            loaded.states.merge(more.states) { $1 }
            loaded.versions.merge(more.versions) { $1 }
            names = SniffMeet.streams(for: command, loaded: loaded.states)
        }
    }

    /// The streams' states: each cached state brought up to date with the events after it, the
    /// others folded from the start. Everything read is committed, so it is cached too.
    func load(_ names: [StreamName], on connection: Connection) throws -> Loaded {
        var loaded = Loaded()
        var after: [String: Int64] = [:]
        for name in names {
            let known = cache.entry(name)
            loaded.states[name] = known?.state ?? SniffMeet.initialState(of: name)
            loaded.versions[name] = known?.version ?? 0
            after[name.rawValue] = known?.version ?? 0
        }
        let recorded = try EventLog.readStreams(on: connection, after: after)
        for name in names {
            let events = recorded[name.rawValue] ?? []
            guard let last = events.last else { continue }
            loaded.states[name] = try events.reduce(loaded.states[name]!) { SniffMeet.evolve($0, try $1.domainEvent()) }
            loaded.versions[name] = last.version
            cache.remember(name, version: last.version, state: loaded.states[name]!)
        }
        return loaded
    }
}
