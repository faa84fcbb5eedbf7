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

    public init(commandID: UUID = UUID(), correlationID: UUID? = nil, causationID: UUID? = nil, actor: UUID?) {
        self.commandID = commandID
        self.correlationID = correlationID ?? commandID
        self.causationID = causationID
        self.actor = actor
    }

    /// The metadata JSON of one event. `readVersions` records the version of every stream the
    /// decision was based on: the append was conditioned on exactly these, so an auditor can
    /// fold a stream to the state the command saw.
    func json(command: String, schemaVersion: Int, readVersions: [String: Int64]) -> Data {
        var object: [String: Any] = [
            "command": command,
            "read_versions": readVersions,
            "command_id": commandID.uuidString.lowercased(),
            "correlation_id": correlationID.uuidString.lowercased(),
            "schema_version": schemaVersion,
        ]
        if let causationID { object["causation_id"] = causationID.uuidString.lowercased() }
        if let actor { object["actor"] = actor.uuidString.lowercased() }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    }
}
