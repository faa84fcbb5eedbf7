import Crypto
import Foundation
import Logging
import Postgres

/// The append-only log on PostgreSQL: appends with expected versions and command ids, stream
/// reads, and the gap-safe feed of the whole log.
public struct EventLog: Sendable {
    /// The NOTIFY channel announcing new events (payload empty: readers look for themselves).
    public static let channel = "sniffmeet_events"

    public let pool: ConnectionPool
    /// Wakes this process's feed readers; fed by NOTIFY and by this process's own appends.
    public let signal: LogSignal
    /// Tells other processes about this process's appends.
    public let announcer: AppendAnnouncer

    public init(pool: ConnectionPool, signal: LogSignal = LogSignal()) {
        self.pool = pool
        self.signal = signal
        self.announcer = AppendAnnouncer(pool: pool)
    }

    // MARK: Append

    /// Appends the events of one command to one or more streams in one transaction.
    ///
    /// `expectations` names every stream the command read or writes with the version it saw;
    /// a stream that is only read is a condition (the append fails if it moved). A retried
    /// `commandID` returns the first append's positions and writes nothing.
    public func append(commandID: UUID?, expectations: [String: ExpectedVersion], events: [NewEvent]) async throws -> AppendResult {
        let result = try await pool.withConnection { connection in
            try Self.append(on: connection, commandID: commandID, expectations: expectations, events: events)
        }
        if !result.replayed { announceCommitted() }
        return result
    }

    /// Appends inside the caller's transaction on `connection` (for commands that write other
    /// tables atomically with their events). The caller announces after commit (`announceCommitted()`).
    public static func append(on connection: Connection, commandID: UUID?, expectations: [String: ExpectedVersion],
                              events: [NewEvent]) throws -> AppendResult {
        let ids = eventIDs(commandID: commandID, events: events)
        let statement = appendStatement(ids: ids, expectations: expectations, events: events)
        return try mapErrors { try decodeAppend(connection.execute(statement.sql, statement.parameters), eventIDs: ids) }
    }

    /// Announces committed appends to every reader: this process's at once, other processes'
    /// through a (coalesced) NOTIFY after the commit, never inside the appending transaction.
    public func announceCommitted() {
        signal.notify()
        announcer.announce()
    }

    static func appendStatement(ids: [UUID], expectations: [String: ExpectedVersion], events: [NewEvent]) -> Connection.Statement {
        let streams = expectations.keys.sorted()
        return Connection.Statement(
            "SELECT transaction_id, positions, replayed FROM append_events($1, $2, $3, $4, $5, $6, $7)",
            [streams, streams.map { expectations[$0]!.parameter },
             events.map(\.stream), ids, events.map(\.type),
             events.map { JSONB($0.data) }, events.map { JSONB($0.metadata) }])
    }

    /// The ids the events of a command are stored under. With a command id they are derived from
    /// it (a retry carries the same ids, which is how the log recognizes it); without one, the
    /// events' own ids.
    public static func eventIDs(commandID: UUID?, events: [NewEvent]) -> [UUID] {
        guard let commandID else { return events.map(\.id) }
        return eventIDs(commandID: commandID, count: events.count)
    }

    /// The ids of the first `count` events of a command.
    public static func eventIDs(commandID: UUID, count: Int) -> [UUID] {
        (0..<count).map { index in
            var bytes = withUnsafeBytes(of: commandID.uuid) { Array($0) }
            bytes += withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) }
            var digest = Array(SHA256.hash(data: bytes).prefix(16))
            digest[6] = (digest[6] & 0x0F) | 0x80  // version 8: custom
            digest[8] = (digest[8] & 0x3F) | 0x80  // RFC 4122 variant
            return UUID(uuid: (digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
                               digest[8], digest[9], digest[10], digest[11], digest[12], digest[13], digest[14], digest[15]))
        }
    }

    static func decodeAppend(_ result: QueryResult, eventIDs: [UUID]) throws -> AppendResult {
        guard let row = result.first else { throw PostgresError.protocolViolation(message: "append returned no row") }
        let transaction = try row.uint64(0)
        let positions = try parseBigintArray(try row.string(1))
        return AppendResult(positions: positions.map { LogPosition(transactionID: transaction, position: $0) },
                            eventIDs: eventIDs, replayed: try row.bool(2))
    }

    static func parseBigintArray(_ text: String) throws -> [Int64] {
        let inner = text.dropFirst().dropLast()
        if inner.isEmpty { return [] }
        return try inner.split(separator: ",").map {
            guard let value = Int64($0) else { throw PostgresError.decoding(column: "positions", value: text, as: "[Int64]") }
            return value
        }
    }

    /// Turns the log's own SQLSTATEs into typed errors.
    static func mapErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            if case .server(let server) = error {
                if server.sqlState == "SM001" { throw EventLogError.versionConflict(stream: server.detail ?? "?", message: server.message) }
                if server.sqlState == "SM002" { throw EventLogError.appendOnly(message: server.message) }
            }
            throw error
        }
    }

    // MARK: Read

    /// The events of one stream from `version` on, in version order.
    public func readStream(_ stream: String, fromVersion version: Int64 = 1) async throws -> [RecordedEvent] {
        try await pool.withConnection { try Self.readStream(on: $0, stream, fromVersion: version) }
    }

    public static func readStream(on connection: Connection, _ stream: String, fromVersion version: Int64 = 1) throws -> [RecordedEvent] {
        let result = try connection.execute("""
            SELECT \(columns) FROM events WHERE stream_id = $1 AND stream_version >= $2 ORDER BY stream_version
            """, [stream, version])
        return try result.rows.map(decodeEvent)
    }

    /// Several streams in one round trip, each in version order.
    public static func readStreams(on connection: Connection, _ streams: [String]) throws -> [String: [RecordedEvent]] {
        let result = try connection.execute("""
            SELECT \(columns) FROM events WHERE stream_id = ANY($1) ORDER BY stream_id, stream_version
            """, [streams])
        var byStream: [String: [RecordedEvent]] = [:]
        for stream in streams { byStream[stream] = [] }
        for row in result.rows {
            let event = try decodeEvent(row)
            byStream[event.stream, default: []].append(event)
        }
        return byStream
    }

    /// One page of the gap-safe feed: events after `checkpoint` in (transaction, position)
    /// order, only from transactions older than every running one, so a later page can never
    /// hold an event that belongs before this one.
    public func readFeed(after checkpoint: LogPosition, limit: Int) async throws -> FeedPage {
        try await pool.withConnection { try Self.readFeed(on: $0, after: checkpoint, limit: limit) }
    }

    public static func readFeed(on connection: Connection, after checkpoint: LogPosition, limit: Int) throws -> FeedPage {
        let result = try connection.execute("""
            SELECT \(columns) FROM events
            WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
              AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY transaction_id, position
            LIMIT $3
            """, [checkpoint.transactionID, checkpoint.position, limit])
        let events = try result.rows.map(decodeEvent)
        var pending = false
        if events.count < limit {
            // Are there events we may not read yet because an older transaction still runs?
            pending = try connection.execute("""
                SELECT EXISTS (SELECT 1 FROM events WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
                               AND transaction_id >= pg_snapshot_xmin(pg_current_snapshot()))
                """, [(events.last?.position ?? checkpoint).transactionID, (events.last?.position ?? checkpoint).position])
                .first!.bool(0)
        }
        return FeedPage(events: events, full: events.count == limit, pendingBeyondHorizon: pending)
    }

    /// The feed position of the newest event readers can see now.
    public func head() async throws -> LogPosition {
        try await pool.withConnection { try Self.head(on: $0) }
    }

    public static func head(on connection: Connection) throws -> LogPosition {
        let result = try connection.execute("""
            SELECT transaction_id, position FROM events
            WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY transaction_id DESC, position DESC LIMIT 1
            """)
        guard let row = result.first else { return .start }
        return LogPosition(transactionID: try row.uint64(0), position: try row.int64(1))
    }

    public static let columns = "transaction_id, position, stream_id, stream_version, event_id, event_type, data, metadata, recorded_at"

    public static func decodeEvent(_ row: Row) throws -> RecordedEvent {
        RecordedEvent(
            position: LogPosition(transactionID: try row.uint64(0), position: try row.int64(1)),
            stream: try row.string(2), version: try row.int64(3), id: try row.uuid(4), type: try row.string(5),
            data: try row.json(6), metadata: try row.json(7), recordedAt: try row.date(8))
    }
}

/// One page of the feed.
public struct FeedPage: Sendable {
    public var events: [RecordedEvent]
    /// The page hit its limit: read again at once.
    public var full: Bool
    /// Newer events exist but wait behind a still-running older transaction.
    public var pendingBeyondHorizon: Bool
}

extension EventLog {
    /// Starts a LISTEN connection that wakes this process's readers when any process appends.
    public func startListening(connectionString: String, logger: Logger = Logger(label: "sniffmeet.log")) -> NotificationListener {
        let signal = self.signal
        let listener = NotificationListener(connectionString: connectionString, channel: Self.channel, logger: logger) {
            signal.notify()
        }
        listener.start()
        return listener
    }
}
