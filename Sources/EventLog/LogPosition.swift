/// A place in the gap-safe feed: the writing transaction's id, then the global position.
///
/// The feed is ordered by this pair, not by position alone, because positions commit out of
/// order. Clients see it as an opaque string (`Log-Position` header): "<transaction>.<position>".
public struct LogPosition: Comparable, Hashable, Sendable, CustomStringConvertible, Codable {
    public var transactionID: UInt64
    public var position: Int64

    public init(transactionID: UInt64, position: Int64) {
        self.transactionID = transactionID
        self.position = position
    }

    /// Before the first event.
    public static let start = LogPosition(transactionID: 0, position: 0)

    public static func < (lhs: LogPosition, rhs: LogPosition) -> Bool {
        (lhs.transactionID, lhs.position) < (rhs.transactionID, rhs.position)
    }

    public var description: String { "\(transactionID).\(position)" }

    /// Parses the opaque form; nil when it is not one.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        // Digits only: Swift's integer parsing would also take a sign ("+0.0").
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
            let transaction = UInt64(parts[0]), let position = Int64(parts[1])
        else { return nil }
        self.init(transactionID: transaction, position: position)
    }
}
