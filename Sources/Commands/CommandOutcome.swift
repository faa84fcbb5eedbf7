import Domain
import EventLog

/// What a command did.
public struct CommandOutcome: Sendable {
    /// The events appended (or, for a replayed command id, the ones its first run appended).
    public var events: [(stream: StreamName, event: Event)]
    /// The feed position of the last event; nil when the command changed nothing.
    public var position: LogPosition?
    /// Every stream the command read, as it stands after the command.
    public var states: [StreamName: StreamState]
    /// The command id had run before: nothing was written this time.
    public var replayed: Bool
    /// The version each stream in `states` is at (not filled for a replayed command id).
    public var versions: [StreamName: Int64] = [:]
    /// Version conflicts the command met and ran again past (a hot stream shows here).
    public var conflicts = 0
    /// The command waited for its turn on a hot stream (`StreamTurns`).
    public var waitedTurn = false
}
