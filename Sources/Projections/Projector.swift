import Domain
import EventLog
import Foundation
import PersonalData
import Postgres

/// One read model: its tables and how a batch of events changes them.
///
/// A projector is stateless; everything it knows is in its tables. `apply` runs inside the
/// caller's transaction, which also moves the checkpoint, so a batch takes effect exactly once.
/// It must write per batch (multi-row statements), never a round trip per event.
public protocol Projector: Sendable {
    /// The checkpoint row's name and the read model's name (`profiles`, `mates`, …).
    var name: String { get }
    /// Every table the projector owns, by logical name. Rebuild and verify copy all of them.
    var tables: [String] { get }
    /// The tables compared by `verify` and checksums (helper tables are derived from them).
    var publicTables: [String] { get }
    /// Writes the effect of `events` (in feed order, all after the checkpoint) into `tables`.
    func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws
}

extension Projector {
    public var publicTables: [String] { tables }
}

/// Which physical tables a projector writes: the live ones, a rebuild's fresh ones, or
/// verify's scratch ones. Table names are the project's own constants, never user input.
public struct TableSet: Sendable, Hashable {
    /// Appended to every logical name: "" (live), "__rebuild", "__verify".
    public var suffix: String

    public init(suffix: String) { self.suffix = suffix }

    public static let live = TableSet(suffix: "")
    public static let rebuild = TableSet(suffix: "__rebuild")
    public static let scratch = TableSet(suffix: "__verify")

    /// The physical name of `table`, quoted for SQL.
    public func callAsFunction(_ table: String) -> String { "\"\(table)\(suffix)\"" }

    /// The unquoted physical name.
    public func raw(_ table: String) -> String { table + suffix }

    /// The checkpoint row of `projector` for this set of tables.
    public func checkpointName(_ projector: String) -> String { projector + suffix }
}

/// Errors of projections.
public enum ProjectionError: Error, Sendable, CustomStringConvertible {
    /// The checkpoint row is not where this writer last left it: another owner or a rebuild's
    /// swap moved it. The batch was rolled back; read the checkpoint again.
    case checkpointMoved(projector: String)
    /// No checkpoint row for the projector (migration 0003 not applied?).
    case noCheckpoint(projector: String)
    /// The dedicated connection that held the projector's lock was replaced: ownership is lost.
    case lostOwnership(projector: String)
    /// No projector has this name.
    case unknownProjector(String)
    /// Another rebuild of the same read model holds its lock.
    case rebuildRunning(projector: String)
    /// `replay --import` needs a database whose log is empty.
    case logNotEmpty
    /// A line of an import file is not an exported event.
    case badImportLine(line: Int, reason: String)
    /// A stream or position given on the command line is not valid.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .checkpointMoved(let p): "the checkpoint of \(p) moved under this writer"
        case .noCheckpoint(let p): "no checkpoint row for projector \(p); is the schema migrated?"
        case .lostOwnership(let p): "lost the ownership of projector \(p)"
        case .unknownProjector(let p): "no projector is named \(p) (known: \(Projectors.names.joined(separator: ", ")))"
        case .rebuildRunning(let p): "a rebuild of \(p) is already running"
        case .logNotEmpty: "the database already holds events; import needs an empty log"
        case .badImportLine(let line, let reason): "line \(line): \(reason)"
        case .invalidArgument(let text): text
        }
    }
}
