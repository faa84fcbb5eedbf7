import CLibPQ
import Foundation
import UUIDText

/// The rows of one statement's result, read straight from libpq's buffer.
///
/// Not `Sendable`: it lives on the connection's thread. Decode into Swift values there and
/// return those.
public final class QueryResult {
    let result: OpaquePointer?

    init(_ result: OpaquePointer?) { self.result = result }
    deinit { if let result { PQclear(result) } }

    /// Number of rows returned.
    public var count: Int { result.map { Int(PQntuples($0)) } ?? 0 }
    /// Rows changed by INSERT/UPDATE/DELETE, from the command tag.
    public var affectedRows: Int {
        guard let result, let tuples = PQcmdTuples(result) else { return 0 }
        return Int(String(cString: tuples)) ?? 0
    }
    public var columnCount: Int { result.map { Int(PQnfields($0)) } ?? 0 }

    public func columnName(_ column: Int) -> String {
        guard let result, let name = PQfname(result, Int32(column)) else { return "?" }
        return String(cString: name)
    }

    /// The row at `index`.
    public subscript(index: Int) -> Row { Row(result: self, index: Int32(index)) }

    /// All rows, in order.
    public var rows: [Row] { (0..<count).map { self[$0] } }

    /// The first row, if any.
    public var first: Row? { count > 0 ? self[0] : nil }
}

/// One row of a `QueryResult`; cells are read by column index.
public struct Row {
    let result: QueryResult
    let index: Int32

    public func isNull(_ column: Int) -> Bool {
        guard let pointer = result.result else { return true }
        return PQgetisnull(pointer, index, Int32(column)) == 1
    }

    /// The raw bytes of a cell, without copying into a String.
    public func withBytes<T>(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T? {
        guard let pointer = result.result, PQgetisnull(pointer, index, Int32(column)) == 0,
            let value = PQgetvalue(pointer, index, Int32(column))
        else { return nil }
        let length = Int(PQgetlength(pointer, index, Int32(column)))
        return try value.withMemoryRebound(to: UInt8.self, capacity: length) {
            try body(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    public func optionalString(_ column: Int) -> String? {
        withBytes(column) { String(decoding: $0, as: UTF8.self) }
    }

    public func string(_ column: Int) throws -> String {
        guard let value = optionalString(column) else { throw nullError(column, "String") }
        return value
    }

    public func optionalInt64(_ column: Int) throws -> Int64? {
        guard let parsed = withBytes(column, Self.parseInt64) else { return nil }
        guard let value = parsed else { throw decodingError(column, "Int64") }
        return value
    }

    /// Decimal digits with an optional sign, read from the cell's bytes (no String per cell).
    static func parseInt64(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative || text.first == UInt8(ascii: "+") { index = 1 }
        guard index < text.count else { return nil }
        var value: Int64 = 0
        while index < text.count {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative
                ? shifted.subtractingReportingOverflow(Int64(digit))
                : shifted.addingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = next
            index += 1
        }
        return value
    }

    public func int64(_ column: Int) throws -> Int64 {
        guard let value = try optionalInt64(column) else { throw nullError(column, "Int64") }
        return value
    }

    public func int(_ column: Int) throws -> Int { Int(try int64(column)) }

    /// `xid8` and other unsigned 64-bit values.
    public func uint64(_ column: Int) throws -> UInt64 {
        let text = try string(column)
        guard let value = UInt64(text) else { throw PostgresError.decoding(column: result.columnName(column), value: text, as: "UInt64") }
        return value
    }

    public func double(_ column: Int) throws -> Double {
        let text = try string(column)
        guard let value = Double(text) else { throw PostgresError.decoding(column: result.columnName(column), value: text, as: "Double") }
        return value
    }

    public func optionalDouble(_ column: Int) throws -> Double? {
        isNull(column) ? nil : try double(column)
    }

    public func bool(_ column: Int) throws -> Bool {
        let parsed = withBytes(column) { text -> Bool? in
            guard text.count == 1 else { return nil }
            return text[0] == UInt8(ascii: "t") ? true : text[0] == UInt8(ascii: "f") ? false : nil
        }
        guard let parsed else { throw nullError(column, "Bool") }
        guard let value = parsed else { throw decodingError(column, "Bool") }
        return value
    }

    public func optionalUUID(_ column: Int) throws -> UUID? {
        // Read straight from the bytes (Foundation's parser goes through sscanf, measurable on list pages).
        guard let parsed = withBytes(column, { UUID(text: $0) }) else { return nil }
        guard let value = parsed else { throw decodingError(column, "UUID") }
        return value
    }

    public func uuid(_ column: Int) throws -> UUID {
        guard let value = try optionalUUID(column) else { throw nullError(column, "UUID") }
        return value
    }

    /// A `timestamptz` cell (the connection runs with DateStyle ISO, TimeZone UTC).
    public func optionalDate(_ column: Int) throws -> Date? {
        guard let parsed = withBytes(column, PostgresTimestamp.parse) else { return nil }
        guard let value = parsed else { throw decodingError(column, "Date") }
        return value
    }

    public func date(_ column: Int) throws -> Date {
        guard let value = try optionalDate(column) else { throw nullError(column, "Date") }
        return value
    }

    /// A `json`/`jsonb` cell as its UTF-8 bytes.
    public func json(_ column: Int) throws -> Data {
        guard let data = withBytes(column, { Data($0) }) else { throw nullError(column, "JSON") }
        return data
    }

    private func decodingError(_ column: Int, _ type: String) -> PostgresError {
        .decoding(column: result.columnName(column), value: optionalString(column), as: type)
    }

    private func nullError(_ column: Int, _ type: String) -> PostgresError {
        .decoding(column: result.columnName(column), value: nil, as: type)
    }
}
