import EventLog
import Foundation
import Postgres

/// Which events `sniffmeet replay` writes.
public struct ReplayFilter: Sendable {
    /// Only these streams (exact names); nil: all.
    public var streams: [String]?
    /// Only these event types; nil: all.
    public var types: [String]?
    /// From this feed position on, inclusive.
    public var from: LogPosition?
    /// Up to this feed position, inclusive.
    public var to: LogPosition?
    /// Recorded at or after.
    public var since: Date?
    /// Recorded before.
    public var until: Date?

    public init(
        streams: [String]? = nil,
        types: [String]? = nil,
        from: LogPosition? = nil,
        to: LogPosition? = nil,
        since: Date? = nil,
        until: Date? = nil
    ) {
        self.streams = streams
        self.types = types
        self.from = from
        self.to = to
        self.since = since
        self.until = until
    }
}

/// Writes the log as NDJSON, one event per line in feed order:
/// `{"position","stream","version","id","type","data","metadata","recorded_at"}`, then one
/// `{"data_key": {"user_id","sealed_key","created_at","erased_at"}}` line per user whose sealed
/// personal data is among those events: their key as stored (sealed under the master key, so
/// only a server with that key opens it; a deleted user's has no key at all). An import with the
/// same master key reads everything the source could, and nothing it could not.
/// The JSON is built by PostgreSQL from the stored jsonb, so `data` and `metadata` come out
/// exactly as stored. Pages by feed position (no long-running cursor) and reads only below
/// the feed horizon, like every other reader of the log. Blocking.
public enum ReplayExport {
    /// Calls `write` with chunks of NDJSON; returns the number of events written.
    @discardableResult
    public static func run(
        _ filter: ReplayFilter,
        on connection: Connection,
        batchSize: Int = 5000,
        write: (Data) throws -> Void
    ) throws -> Int {
        var cursor = LogPosition.start
        if let from = filter.from, from.position > 0 || from.transactionID > 0 {
            // Inclusive: start just before `from`.
            cursor =
                from.position > 0
                ? LogPosition(transactionID: from.transactionID, position: from.position - 1)
                : LogPosition(transactionID: from.transactionID - 1, position: Int64.max)
        }
        var written = 0
        var owners: Set<String> = []
        while true {
            let result = try connection.execute(
                """
                SELECT json_build_object(
                           'position', transaction_id::text || '.' || position::text, 'stream', stream_id,
                           'version', stream_version, 'id', event_id, 'type', event_type, 'data', data, 'metadata', metadata,
                           'recorded_at', to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))::text,
                       transaction_id, position, data->'sealed'->>'owner'
                FROM events
                WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
                  AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
                  AND ($3::xid8 IS NULL OR (transaction_id, position) <= ($3::xid8, $4::bigint))
                  AND ($5::text[] IS NULL OR stream_id = ANY($5::text[]))
                  AND ($6::text[] IS NULL OR event_type = ANY($6::text[]))
                  AND ($7::timestamptz IS NULL OR recorded_at >= $7::timestamptz)
                  AND ($8::timestamptz IS NULL OR recorded_at < $8::timestamptz)
                ORDER BY transaction_id, position
                LIMIT $9
                """,
                [
                    cursor.transactionID, cursor.position, filter.to?.transactionID, filter.to?.position,
                    filter.streams, filter.types, filter.since, filter.until, batchSize,
                ]
            )
            var chunk = Data()
            for row in result.rows {
                try row.withBytes(0) { chunk.append(contentsOf: $0) }
                chunk.append(UInt8(ascii: "\n"))
                if !row.isNull(3) { owners.insert(try row.string(3)) }
            }
            if !chunk.isEmpty { try write(chunk) }
            written += result.count
            guard result.count == batchSize else { break }
            let last = result[result.count - 1]
            cursor = LogPosition(transactionID: try last.uint64(1), position: try last.int64(2))
        }
        try writeKeys(of: owners, on: connection, write: write)
        return written
    }

    /// The `data_key` lines of `owners`.
    static func writeKeys(of owners: Set<String>, on connection: Connection, write: (Data) throws -> Void) throws {
        guard !owners.isEmpty else { return }
        let result = try connection.execute(
            """
            SELECT json_build_object('data_key', json_build_object(
                       'user_id', user_id, 'sealed_key', encode(sealed_key, 'hex'), 'created_at', created_at, 'erased_at', erased_at))::text
            FROM data_keys WHERE user_id = ANY($1::uuid[]) ORDER BY user_id
            """,
            [owners.sorted()]
        )
        var chunk = Data()
        for row in result.rows {
            try row.withBytes(0) { chunk.append(contentsOf: $0) }
            chunk.append(UInt8(ascii: "\n"))
        }
        if !chunk.isEmpty { try write(chunk) }
    }
}
