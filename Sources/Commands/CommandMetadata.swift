import Foundation

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

    public init(commandID: UUID = UUID(), correlationID: UUID? = nil, causationID: UUID? = nil, actor: UUID?) {
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
    /// Written by hand, keys sorted: JSONSerialization took a tenth of the server's CPU per
    /// SendWalk (`perf record` under `POST /v1/walks`).
    func json(command: String, schemaVersion: Int, readVersions: [String: Int64]) -> Data {
        var out = "{"
        if let actor { out += "\"actor\":\"\(actor.uuidString.lowercased())\"," }
        if let causationID { out += "\"causation_id\":\"\(causationID.uuidString.lowercased())\"," }
        out += "\"command\":"
        Self.appendString(command, to: &out)
        out += ",\"command_id\":\"\(commandID.uuidString.lowercased())\""
        out += ",\"correlation_id\":\"\(correlationID.uuidString.lowercased())\""
        out += ",\"read_versions\":{"
        for (index, stream) in readVersions.keys.sorted().enumerated() {
            if index > 0 { out += "," }
            Self.appendString(stream, to: &out)
            out += ":\(readVersions[stream]!)"
        }
        out += "},\"schema_version\":\(schemaVersion)}"
        return Data(out.utf8)
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func appendString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
