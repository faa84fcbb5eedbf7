import Foundation

/// The keyset key of the newest-first lists of mates, mate requests and walks: a row's time in
/// microseconds since 1970 and its id. A page continues below the last key shown.
public struct TimeKey: Sendable, Hashable {
    /// Microseconds since 1970, computed by PostgreSQL so the key compares exactly as its
    /// timestamps do (a round trip through `Date`'s floating point could miss by one).
    public var micros: Int64
    public var id: UUID

    public init(micros: Int64, id: UUID) {
        self.micros = micros
        self.id = id
    }

    /// The row's time as a `Date` (microseconds are exact in a `Date` for centuries around now),
    /// so a list needs not read the same timestamp twice.
    public var date: Date { Date(timeIntervalSince1970: Double(micros) / 1_000_000) }
}
