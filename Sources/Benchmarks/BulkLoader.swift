import EventLog
import Foundation
import Postgres

/// Fills an empty log with a synthetic workload's events through COPY, for benchmarks: far
/// faster than appending command by command, and the events are the same the domain decides.
/// All rows land in one transaction, in the workload's order. Blocking.
public enum BulkLoader {
    /// Loads at least `count` events (whole commands); returns how many were loaded.
    @discardableResult
    public static func load(
        _ workload: inout SyntheticWorkload,
        events count: Int,
        on connection: Connection,
        progress: @escaping (Int) -> Void = { _ in }
    ) throws -> Int {
        var loaded = 0
        var versions: [String: Int64] = [:]
        // Build the rows in chunks and hand them to COPY as they are made.
        struct Chunks: Sequence, IteratorProtocol {
            var make: () -> Data?
            mutating func next() -> Data? { make() }
        }
        var generator = workload
        let copied = try connection.copyIn(
            "COPY events (stream_id, stream_version, event_id, event_type, data, metadata, recorded_at) FROM STDIN",
            Chunks {
                guard loaded < count else { return nil }
                var chunk = Data()
                chunk.reserveCapacity(1 << 20)
                while loaded < count && chunk.count < (1 << 20) {
                    let step = generator.next()
                    let recordedAt = PostgresTimestamp.format(generator.now)
                    for event in step.events {
                        let version = (versions[event.stream] ?? 0) + 1
                        versions[event.stream] = version
                        chunk.append(contentsOf: "\(event.stream)\t\(version)\t\(event.id.uuidString.lowercased())\t\(event.type)\t".utf8)
                        appendEscaped(event.data, to: &chunk)
                        chunk.append(UInt8(ascii: "\t"))
                        appendEscaped(event.metadata, to: &chunk)
                        chunk.append(contentsOf: "\t\(recordedAt)\n".utf8)
                        loaded += 1
                    }
                }
                progress(loaded)
                return chunk
            }
        )
        workload = generator
        precondition(copied == loaded)
        try storeKeys(workload.takeNewKeys(), on: connection)
        return copied
    }

    /// Writes the data keys a sealing workload made (`SyntheticWorkload.takeNewKeys()`).
    public static func storeKeys(_ keys: [(user: UUID, sealedKey: String)], on connection: Connection) throws {
        guard !keys.isEmpty else { return }
        try connection.execute(
            """
            INSERT INTO data_keys (user_id, sealed_key)
            SELECT user_id, decode(key, 'hex') FROM unnest($1::uuid[], $2::text[]) AS x(user_id, key)
            """,
            [keys.map(\.user), keys.map(\.sealedKey)]
        )
    }

    /// COPY text format: backslashes doubled; JSON holds no raw tab or newline.
    static func appendEscaped(_ json: Data, to chunk: inout Data) {
        for byte in json {
            if byte == UInt8(ascii: "\\") { chunk.append(byte) }
            chunk.append(byte)
        }
    }
}
