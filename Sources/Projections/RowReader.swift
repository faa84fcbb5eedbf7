import Foundation
import Postgres

/// Reads a row's cells in order, one call per column. A query's decoder then reads its columns
/// in the order its SELECT list names them, and a row type nested in another (a card in a
/// walk) needs no offset: it starts where the reader stands.
struct RowReader {
    let row: Row
    /// The next column to read.
    private(set) var column: Int

    init(_ row: Row, from column: Int = 0) {
        self.row = row
        self.column = column
    }

    private mutating func next<T>(_ read: (Row, Int) throws -> T) rethrows -> T {
        defer { column += 1 }
        return try read(row, column)
    }

    /// Whether the next cell is NULL (without moving on).
    func nextIsNull() -> Bool { row.isNull(column) }

    mutating func skip(_ count: Int = 1) { column += count }

    mutating func string() throws -> String { try next { try $0.string($1) } }
    mutating func optionalString() -> String? { next { $0.optionalString($1) } }
    mutating func int() throws -> Int { try next { try $0.int($1) } }
    mutating func int64() throws -> Int64 { try next { try $0.int64($1) } }
    mutating func uint64() throws -> UInt64 { try next { try $0.uint64($1) } }
    mutating func double() throws -> Double { try next { try $0.double($1) } }
    mutating func optionalDouble() throws -> Double? { try next { try $0.optionalDouble($1) } }
    mutating func bool() throws -> Bool { try next { try $0.bool($1) } }
    mutating func uuid() throws -> UUID { try next { try $0.uuid($1) } }
    mutating func optionalUUID() throws -> UUID? { try next { try $0.optionalUUID($1) } }
    mutating func date() throws -> Date { try next { try $0.date($1) } }
    mutating func optionalDate() throws -> Date? { try next { try $0.optionalDate($1) } }

    /// The raw bytes of the next cell (nil when NULL), without copying into a String.
    mutating func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T? {
        try next { try $0.withBytes($1, body) }
    }
}
