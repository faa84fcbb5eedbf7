import Foundation
import Postgres

/// `sniffmeet replay --import FILE`: loads an NDJSON export into a database whose log is empty,
/// keeping event ids, streams, versions, data, metadata and recording times.
///
/// Lines go in with COPY into a staging table (PostgreSQL parses the JSON, so `data` stays
/// byte-for-byte the jsonb it was), then into `events` in file order in one transaction. The
/// imported events get new feed positions in file order (transaction ids of another database
/// mean nothing here); the export's feed order is kept. Each stream's versions must then run
/// 1, 2, 3… in that order, or nothing is imported. `data_key` lines go into `data_keys` as they
/// were (sealed under the source's master key, which the target must then use too). Blocking.
public enum ReplayImport {
    /// Imports the NDJSON read from `input` in chunks; returns the number of events.
    @discardableResult
    public static func run(_ input: FileHandle, on connection: Connection) throws -> Int {
        try connection.transaction { connection in
            // Nobody may append while we check emptiness and load.
            try connection.execute("LOCK TABLE events IN EXCLUSIVE MODE")
            guard try !connection.execute("SELECT EXISTS (SELECT 1 FROM events)").first!.bool(0) else { throw ProjectionError.logNotEmpty }
            try connection.execute("CREATE TEMPORARY TABLE import_lines (line_no bigserial, doc jsonb NOT NULL) ON COMMIT DROP")
            try connection.copyIn("COPY import_lines (doc) FROM STDIN", CopyTextLines(input))
            let bad = try connection.execute(
                """
                SELECT line_no FROM import_lines
                WHERE jsonb_typeof(doc) <> 'object'
                   OR NOT (doc ?& ARRAY['stream', 'version', 'id', 'type', 'data', 'recorded_at'] OR doc ? 'data_key')
                ORDER BY line_no LIMIT 1
                """
            )
            if let row = bad.first {
                throw ProjectionError.badImportLine(
                    line: try row.int(0),
                    reason: "not an exported event (stream, version, id, type, data, recorded_at)"
                )
            }
            try connection.execute(
                """
                INSERT INTO data_keys (user_id, sealed_key, created_at, erased_at)
                SELECT (k->>'user_id')::uuid, decode(k->>'sealed_key', 'hex'), (k->>'created_at')::timestamptz,
                       (k->>'erased_at')::timestamptz
                FROM (SELECT doc->'data_key' AS k FROM import_lines WHERE doc ? 'data_key') AS keys
                ON CONFLICT (user_id) DO NOTHING
                """
            )
            let imported = try connection.execute(
                """
                INSERT INTO events (position, stream_id, stream_version, event_id, event_type, data, metadata, recorded_at)
                SELECT line_no, doc->>'stream', (doc->>'version')::bigint, (doc->>'id')::uuid, doc->>'type', doc->'data',
                       coalesce(doc->'metadata', '{}'::jsonb), (doc->>'recorded_at')::timestamptz
                FROM import_lines WHERE NOT doc ? 'data_key' ORDER BY line_no
                """
            ).affectedRows
            let broken = try connection.execute(
                """
                SELECT stream_id, stream_version FROM (
                    SELECT stream_id, stream_version, row_number() OVER (PARTITION BY stream_id ORDER BY position) AS expected
                    FROM events) AS v
                WHERE stream_version <> expected LIMIT 1
                """
            )
            if let row = broken.first {
                throw ProjectionError.badImportLine(
                    line: 0,
                    reason: "stream \(try row.string(0)) is not complete and in order at version \(try row.int64(1))"
                )
            }
            // Later appends take positions after the imported ones.
            try connection.execute(
                "SELECT setval(pg_get_serial_sequence('events', 'position'), greatest((SELECT max(position) FROM events), 1))"
            )
            return imported
        }
    }
}

/// Reads NDJSON lines from a file and yields them as COPY text rows: backslashes doubled (JSON
/// never holds a raw tab or newline inside a line), empty lines skipped.
struct CopyTextLines: Sequence, IteratorProtocol {
    let input: FileHandle
    var pending = Data()
    var finished = false

    init(_ input: FileHandle) { self.input = input }

    mutating func next() -> Data? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                // Send all complete lines in one chunk.
                let lastNewline = pending.lastIndex(of: UInt8(ascii: "\n"))!
                let lines = pending[pending.startIndex...lastNewline]
                pending = Data(pending[(lastNewline + 1)...])
                _ = newline
                return Self.escape(lines)
            }
            if finished {
                if pending.isEmpty { return nil }
                defer { pending = Data() }
                return Self.escape(pending + Data("\n".utf8))
            }
            let chunk = input.readData(ofLength: 1 << 20)
            if chunk.isEmpty { finished = true } else { pending.append(chunk) }
        }
    }

    static func escape(_ lines: Data) -> Data {
        var out = Data()
        out.reserveCapacity(lines.count + lines.count / 16)
        var lineStart = true
        for byte in lines {
            if byte == UInt8(ascii: "\n") {
                if !lineStart { out.append(byte) }  // skip empty lines
                lineStart = true
                continue
            }
            if byte == UInt8(ascii: "\r") { continue }
            lineStart = false
            if byte == UInt8(ascii: "\\") { out.append(byte) }
            out.append(byte)
        }
        return out
    }
}
