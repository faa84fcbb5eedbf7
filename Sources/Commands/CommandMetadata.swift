import Foundation
import Postgres
import UUIDText

/// Who asked for a command and why; stored in every event's metadata.
public struct CommandMetadata: Sendable, Hashable {
    /// Identifies the command: a retry with the same id writes nothing and returns the first result.
    public var commandID: UUID
    /// Ties together everything one user action caused.
    public var correlationID: UUID
    /// The command or event that caused this command, if any.
    public var causationID: UUID?
    /// The acting user (nil for system jobs such as walk expiry).
    public var actor: UUID?

    /// True when `commandID` was made for this one request and never used before, so no
    /// earlier run of it can be in the log and the handler skips looking for one (a round trip
    /// and a query per command). Only the request path that mints the id may say so.
    public var isFirstUse: Bool

    public init(commandID: UUID = .random(), correlationID: UUID? = nil, causationID: UUID? = nil, actor: UUID?) {
        self.commandID = commandID
        self.correlationID = correlationID ?? commandID
        self.causationID = causationID
        self.actor = actor
        self.isFirstUse = false
    }

    /// Metadata with a new command id, for a request that will not be retried under it.
    public static func firstUse(actor: UUID?) -> CommandMetadata {
        var metadata = CommandMetadata(actor: actor)
        metadata.isFirstUse = true
        return metadata
    }

    /// The metadata JSON of one event. `readVersions` records the version of every stream the
    /// decision was based on: the append was conditioned on exactly these, so an auditor can
    /// fold a stream to the state the command saw.
    ///
    /// Written by hand as bytes, keys sorted: JSONSerialization, then string interpolation of
    /// `uuidString.lowercased()`, were each several percent of the server's CPU per SendWalk
    /// (`perf record` under `POST /v1/walks`).
    func json(command: String, schemaVersion: Int, readVersions: [String: Int64]) -> Data {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(256)
        func key(_ name: StaticString) {
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        func uuid(_ id: UUID) {
            out.append(UInt8(ascii: "\""))
            id.appendLowercase(to: &out)
            out.append(UInt8(ascii: "\""))
        }
        if let actor {
            key("actor")
            uuid(actor)
        }
        if let causationID {
            key("causation_id")
            uuid(causationID)
        }
        key("command")
        Self.appendString(command, to: &out)
        key("command_id")
        uuid(commandID)
        key("correlation_id")
        uuid(correlationID)
        key("read_versions")
        out.append(UInt8(ascii: "{"))
        for (index, stream) in readVersions.keys.sorted().enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            Self.appendString(stream, to: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: String(readVersions[stream]!).utf8)
        }
        out.append(UInt8(ascii: "}"))
        key("schema_version")
        out.append(contentsOf: String(schemaVersion).utf8)
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
