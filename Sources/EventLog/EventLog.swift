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

    /// Batches concurrent appends into shared transactions.
    let groupCommit: GroupCommit

    public init(pool: ConnectionPool, signal: LogSignal = LogSignal()) {
        self.pool = pool
        self.signal = signal
        self.announcer = AppendAnnouncer(pool: pool)
        self.groupCommit = GroupCommit(pool: pool)
    }

    // MARK: Read

    /// The events of one stream from `version` on, in version order.
    public func readStream(_ stream: String, fromVersion version: Int64 = 1) async throws -> [RecordedEvent] {
        try await pool.withConnection { try Self.readStream(on: $0, stream, fromVersion: version) }
    }

    public static func readStream(on connection: Connection, _ stream: String, fromVersion version: Int64 = 1) throws -> [RecordedEvent] {
        let result = try connection.execute(
            """
            SELECT \(columns) FROM events WHERE stream_id = $1 AND stream_version >= $2 ORDER BY stream_version
            """,
            [stream, version]
        )
        return try result.rows.map(decodeEvent)
    }

    /// Several streams in one round trip: each stream's events after the given version (0: the
    /// whole stream), in version order, for callers that already hold a state up to some version.
    public static func readStreams(on connection: Connection, after versions: [String: Int64]) throws -> [String: [RecordedEvent]] {
        let statement = readStreamsStatement(after: versions)
        return try streams(from: connection.execute(statement.sql, statement.parameters, prepared: true), asked: versions)
    }

    /// The statement of `readStreams(on:after:)`, for pipelines.
    public static func readStreamsStatement(after versions: [String: Int64]) -> Connection.Statement {
        let streams = Array(versions.keys)
        if (1...readFewStreamsSQL.count).contains(streams.count) {
            let parameters: [any PostgresEncodable] = streams.flatMap { [$0, versions[$0]!] as [any PostgresEncodable] }
            return Connection.Statement(readFewStreamsSQL[streams.count - 1], parameters, prepared: true)
        }
        return Connection.Statement(readStreamsAfterSQL, [streams, streams.map { versions[$0]! }], prepared: true)
    }

    /// `readStreamsAfterSQL` for one to four streams (nearly every command's read), with scalar
    /// parameters. With arrays, PostgreSQL planned the statement afresh on every execution (a
    /// custom plan costs less than a generic one for any array shorter than its estimate): 52 µs
    /// of planning per read, more than the read itself, measured with pg_stat_statements under
    /// `scripts/bench-http`. With scalars the generic plan costs what a custom one does, so it
    /// is kept after the first executions: one index probe per stream.
    static let readFewStreamsSQL: [String] = (1...4).map { count in
        let branches = (0..<count).map { index in
            "SELECT \(columns) FROM events WHERE stream_id = $\(2 * index + 1)::text AND stream_version > $\(2 * index + 2)::bigint"
        }
        return branches.joined(separator: "\nUNION ALL\n") + "\nORDER BY stream_id, stream_version"
    }

    /// Its rows by stream; every stream asked for has an entry.
    public static func streams(from result: QueryResult, asked versions: [String: Int64]) throws -> [String: [RecordedEvent]] {
        var byStream: [String: [RecordedEvent]] = [:]
        for stream in versions.keys { byStream[stream] = [] }
        for row in result.rows {
            let event = try decodeEvent(row)
            byStream[event.stream, default: []].append(event)
        }
        return byStream
    }

    /// One index probe per stream, whatever plan the prepared statement settles on: a plain join
    /// with the unnested list let the generic plan scan the whole log (throughput fell as the
    /// log grew under `scripts/bench-http`).
    static let readStreamsAfterSQL = """
        SELECT e.* FROM unnest($1::text[], $2::bigint[]) AS s(stream_id, after)
        CROSS JOIN LATERAL (
            SELECT \(columns) FROM events
            WHERE events.stream_id = s.stream_id AND events.stream_version > s.after
            ORDER BY events.stream_version
        ) AS e
        ORDER BY e.stream_id, e.stream_version
        """

    /// A page of the feed: the events after a checkpoint (`$1`, `$2`), up to `$3`, below the horizon.
    static let feedPageSQL = feedPageSQL(columns: columns)

    /// `feedPageSQL` without the events' bodies (`headColumns`).
    static let feedHeadsSQL = feedPageSQL(columns: headColumns)

    private static func feedPageSQL(columns: String) -> String {
        """
        SELECT \(columns) FROM events
        WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
          AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY transaction_id, position
        LIMIT $3
        """
    }

    /// "Is the newest event after the checkpoint beyond the horizon?" and not "does any event
    /// beyond the horizon exist?": the planner ran that EXISTS as a sequential scan of the whole
    /// log (no row matches, so it never stops early); this is one probe of the feed index,
    /// backwards from its end.
    static let pendingBeyondHorizonSQL = """
        SELECT coalesce((SELECT transaction_id FROM events WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
                         ORDER BY transaction_id DESC, position DESC LIMIT 1)
                        >= pg_snapshot_xmin(pg_current_snapshot()), false)
        """

    /// One page of the gap-safe feed: events after `checkpoint` in (transaction, position)
    /// order, only from transactions older than every running one, so a later page can never
    /// hold an event that belongs before this one.
    public func readFeed(after checkpoint: LogPosition, limit: Int) async throws -> FeedPage {
        try await pool.withConnection { try Self.readFeed(on: $0, after: checkpoint, limit: limit) }
    }

    ///
    /// With `bodies: false` the events' `data` and `metadata` are left empty (not read): for a
    /// reader that holds most events already (the projectors of the process that appended them)
    /// and reads the others' data with `data(at:on:)`. Under `POST /v1/walks` the feed's JSON
    /// bodies, rendered as text by PostgreSQL and copied by this process, were read for events
    /// the projectors then took from memory.
    public static func readFeed(
        on connection: Connection,
        after checkpoint: LogPosition,
        limit: Int,
        bodies: Bool = true
    ) throws -> FeedPage {
        let after: [any PostgresEncodable] = [checkpoint.transactionID, checkpoint.position]
        // One round trip: the page, and whether newer events wait behind a still-running older
        // transaction (then the reader looks again soon instead of waiting for a signal).
        let results = try connection.pipeline([
            Connection.Statement(bodies ? feedPageSQL : feedHeadsSQL, after + [limit], prepared: true),
            Connection.Statement(pendingBeyondHorizonSQL, after, prepared: true),
        ])
        let events = try results[0].rows.map { try decodeEvent($0, bodies: bodies) }
        let pending = try results[1].first!.bool(0)
        return FeedPage(events: events, full: events.count == limit, pendingBeyondHorizon: pending)
    }

    /// The feed position of the newest event readers can see now.
    public func head() async throws -> LogPosition {
        try await pool.withConnection { try Self.head(on: $0) }
    }

    public static func head(on connection: Connection) throws -> LogPosition {
        let result = try connection.execute(
            """
            SELECT transaction_id, position FROM events
            WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY transaction_id DESC, position DESC LIMIT 1
            """
        )
        guard let row = result.first else { return .start }
        return LogPosition(transactionID: try row.uint64(0), position: try row.int64(1))
    }

    public static let columns = "transaction_id, position, stream_id, stream_version, event_id, event_type, data, metadata, recorded_at"
    /// `columns` but the bodies (`data`, `metadata`).
    static let headColumns = "transaction_id, position, stream_id, stream_version, event_id, event_type, recorded_at"

    /// The `data` of the events at `positions` (feed positions of events read without their
    /// bodies), by position.
    public static func data(at positions: [Int64], on connection: Connection) throws -> [Int64: Data] {
        let result = try connection.execute(
            "SELECT position, data FROM events WHERE position = ANY($1::bigint[])",
            [positions],
            prepared: true
        )
        var data: [Int64: Data] = [:]
        for row in result.rows { data[try row.int64(0)] = try row.json(1) }
        return data
    }

    public static func decodeEvent(_ row: Row) throws -> RecordedEvent { try decodeEvent(row, bodies: true) }

    /// A row of `columns`, or of `headColumns` without `bodies` (then `data` and `metadata` are empty).
    static func decodeEvent(_ row: Row, bodies: Bool) throws -> RecordedEvent {
        RecordedEvent(
            position: LogPosition(transactionID: try row.uint64(0), position: try row.int64(1)),
            stream: try row.string(2),
            version: try row.int64(3),
            id: try row.uuid(4),
            type: try row.string(5),
            data: bodies ? try row.json(6) : Data(),
            metadata: bodies ? try row.json(7) : Data(),
            recordedAt: try row.date(bodies ? 8 : 6)
        )
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
