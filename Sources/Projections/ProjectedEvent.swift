import Domain
import EventLog
import Foundation

/// An event of the log decoded into the domain's `Event`, with what projectors need of its
/// record: feed position, event id (notification ids) and stream.
public struct ProjectedEvent: Sendable {
    public var position: LogPosition
    public var id: UUID
    public var stream: String
    public var event: Event

    public init(position: LogPosition, id: UUID, stream: String, event: Event) {
        self.position = position
        self.id = id
        self.stream = stream
        self.event = event
    }

    /// Decodes a page of the feed. Types this code does not know are left out (no read model
    /// can use them; the caller's checkpoint still moves past them). A known type that fails
    /// to decode is an error: skipping it would silently lose a row.
    public static func decode(_ records: [RecordedEvent]) throws -> [ProjectedEvent] {
        var decoded: [ProjectedEvent] = []
        decoded.reserveCapacity(records.count)
        for record in records {
            guard Event.typeNames.contains(record.type) else { continue }
            let event = try Event.decode(typeName: record.type, schemaVersion: schemaVersion(in: record.metadata), data: record.data)
            decoded.append(ProjectedEvent(position: record.position, id: record.id, stream: record.stream, event: event))
        }
        return decoded
    }

    /// The `schema_version` of the metadata JSON; 1 when absent (events written before it was recorded).
    static func schemaVersion(in metadata: Data) -> Int {
        // The usual form, `"schema_version":N` as jsonb prints it, is read without a JSON parse
        // (a rebuild reads every event's metadata); anything else takes the general path.
        if let fast = fastSchemaVersion(metadata) { return fast }
        guard metadata.range(of: Data("schema_version".utf8)) != nil,
              let object = try? JSONSerialization.jsonObject(with: metadata) as? [String: Any] else { return 1 }
        if let number = object["schema_version"] as? Int { return number }
        if let text = object["schema_version"] as? String, let number = Int(text) { return number }
        return 1
    }

    private static let schemaKey = Array("\"schema_version\":".utf8)

    /// `"schema_version": 12` (optional space) → 12; nil when absent or not a plain integer.
    static func fastSchemaVersion(_ metadata: Data) -> Int? {
        metadata.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
            let key = schemaKey
            guard bytes.count > key.count else { return nil }
            var index = 0
            outer: while index + key.count <= bytes.count {
                for offset in 0..<key.count where bytes[index + offset] != key[offset] {
                    index += 1
                    continue outer
                }
                var cursor = index + key.count
                while cursor < bytes.count, bytes[cursor] == UInt8(ascii: " ") { cursor += 1 }
                var value = 0, digits = 0
                while cursor < bytes.count, bytes[cursor] >= UInt8(ascii: "0"), bytes[cursor] <= UInt8(ascii: "9"), digits < 9 {
                    value = value * 10 + Int(bytes[cursor] - UInt8(ascii: "0"))
                    cursor += 1
                    digits += 1
                }
                guard digits > 0, cursor < bytes.count, bytes[cursor] == UInt8(ascii: ",") || bytes[cursor] == UInt8(ascii: "}") else { return nil }
                return value
            }
            return nil
        }
    }
}
