import CivilTime
import Foundation
import UUIDText

/// A Swift value that can be sent as a statement parameter, in PostgreSQL's text format (and,
/// as an element of an array parameter of a prepared statement, in its binary format).
///
/// Parameters always travel separately from the SQL text (`PQexecParams`), so nothing a user
/// sends is ever spliced into a statement.
public protocol PostgresEncodable: Sendable {
    /// The text form of the value, or nil for SQL NULL.
    var postgresText: String? { get }
    /// Appends the value as one element of an array literal (quoted and escaped as needed).
    /// Batches send tens of thousands of elements, so the common types write bytes directly.
    func appendArrayElement(to out: inout [UInt8])
    /// True for array parameters: a statement taking one gets a custom plan on every execution
    /// unless its transaction forces generic plans (`Connection.Statement.takesArrays`).
    static var isArray: Bool { get }
    /// The OID of the PostgreSQL type whose binary format `appendBinaryElement` writes; nil for
    /// a type only ever sent as text.
    static var binaryType: UInt32? { get }
    /// Appends the value as one element of a binary array: its length and bytes (`-1` for
    /// NULL). Called only for a type with a `binaryType`.
    func appendBinaryElement(to array: inout BinaryArray)
    /// This array parameter in PostgreSQL's binary format, when its elements are of
    /// `elementType` (the element type the statement declares); nil to send it as text.
    func binaryArray(of elementType: UInt32) -> BinaryArray?
}

extension PostgresEncodable {
    public static var isArray: Bool { false }
    public static var binaryType: UInt32? { nil }

    public func appendBinaryElement(to array: inout BinaryArray) {
        preconditionFailure("\(Self.self) has no binary format")
    }

    public func binaryArray(of elementType: UInt32) -> BinaryArray? { nil }

    public func appendArrayElement(to out: inout [UInt8]) {
        guard let text = postgresText else {
            out += ArrayLiteral.null
            return
        }
        ArrayLiteral.appendQuoted(text, to: &out)
    }
}

/// A one-dimensional array in PostgreSQL's binary format, as `array_recv` reads it: the number
/// of dimensions, a has-nulls flag, the element type, the length and lower bound, then each
/// element's length and bytes. Sent binary, an array costs the server no parsing of its own
/// (`array_in` was about a tenth of PostgreSQL's CPU under sign-ups, reading the text literals
/// of the log's batched insert) and the client no quoting.
public struct BinaryArray: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Whether a text element holds a NUL byte, which PostgreSQL's text cannot: the parameter
    /// is refused before sending, as a text parameter with one is.
    public private(set) var containsNUL = false
    private var hasNulls = false

    /// An array of `count` elements of `elementType`; append them next.
    init(elementType: UInt32, count: Int) {
        bytes.reserveCapacity(20 + count * 24)
        append(Int32(count > 0 ? 1 : 0))
        append(Int32(0))
        append(elementType)
        if count > 0 {
            append(Int32(count))
            append(Int32(1))
        }
    }

    public mutating func appendNull() {
        append(Int32(-1))
        if !hasNulls {
            hasNulls = true
            bytes[7] = 1
        }
    }

    /// An element of fixed-width big-endian bytes.
    public mutating func appendElement<Integer: FixedWidthInteger>(bigEndian value: Integer) {
        append(Int32(Integer.bitWidth / 8))
        append(value)
    }

    /// An element of raw bytes (`bytea`, `uuid`).
    public mutating func appendElement<Bytes: Collection<UInt8>>(bytes element: Bytes) {
        append(Int32(element.count))
        bytes.append(contentsOf: element)
    }

    /// A text element, after `prefix` (`jsonb`'s format version).
    public mutating func appendElement(text: String, prefix: UInt8? = nil) {
        var text = text
        text.withUTF8 { appendElement(utf8: UnsafeRawBufferPointer($0), prefix: prefix) }
    }

    /// A text element given as its UTF-8 bytes, after `prefix`.
    public mutating func appendElement(utf8 data: Data, prefix: UInt8? = nil) {
        data.withUnsafeBytes { appendElement(utf8: $0, prefix: prefix) }
    }

    private mutating func appendElement(utf8: UnsafeRawBufferPointer, prefix: UInt8?) {
        append(Int32(utf8.count + (prefix == nil ? 0 : 1)))
        if let prefix { bytes.append(prefix) }
        bytes.append(contentsOf: utf8)
        if let base = utf8.baseAddress, !utf8.isEmpty, memchr(base, 0, utf8.count) != nil { containsNUL = true }
    }

    private mutating func append<Integer: FixedWidthInteger>(_ value: Integer) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// The element type an array type's binary form carries, for the array types this client
    /// sends binary (`pg_type`: `_int8` holds `int8`, and so on).
    public static func elementType(ofArray arrayType: UInt32) -> UInt32? {
        switch arrayType {
        case 1016: 20  // int8[]
        case 1007: 23  // int4[]
        case 1000: 16  // bool[]
        case 1009: 25  // text[]
        case 3807: 3802  // jsonb[]
        case 2951: 2950  // uuid[]
        case 1001: 17  // bytea[]
        case 1185: 1184  // timestamptz[]
        case 1022: 701  // float8[]
        default: nil
        }
    }
}

/// Helpers for PostgreSQL's array literal text (`{"a","b",NULL}`).
enum ArrayLiteral {
    static let null = Array("NULL".utf8)

    /// Always quoted: backslash and double quote escaped, anything else as is.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension String: PostgresEncodable {
    public var postgresText: String? { self }
    public static var binaryType: UInt32? { 25 }  // text
    public func appendBinaryElement(to array: inout BinaryArray) { array.appendElement(text: self) }
}
/// Integers are sent in decimal, in arrays unquoted.
extension PostgresEncodable where Self: BinaryInteger {
    public var postgresText: String? { String(self) }
    public func appendArrayElement(to out: inout [UInt8]) { out.append(contentsOf: String(self).utf8) }
}
extension Int: PostgresEncodable {
    public static var binaryType: UInt32? { 20 }  // int8
    public func appendBinaryElement(to array: inout BinaryArray) { array.appendElement(bigEndian: Int64(self)) }
}
extension Int32: PostgresEncodable {
    public static var binaryType: UInt32? { 23 }  // int4
    public func appendBinaryElement(to array: inout BinaryArray) { array.appendElement(bigEndian: self) }
}
extension Int64: PostgresEncodable {
    public static var binaryType: UInt32? { 20 }  // int8
    public func appendBinaryElement(to array: inout BinaryArray) { array.appendElement(bigEndian: self) }
}
/// Text only: no PostgreSQL integer type holds every value (transaction ids go as `xid8` text).
extension UInt64: PostgresEncodable {}
extension Double: PostgresEncodable {
    public var postgresText: String? { self.description }
    public func appendArrayElement(to out: inout [UInt8]) { out.append(contentsOf: description.utf8) }
    public static var binaryType: UInt32? { 701 }  // float8
    public func appendBinaryElement(to array: inout BinaryArray) { array.appendElement(bigEndian: bitPattern) }
}
extension Bool: PostgresEncodable {
    public var postgresText: String? { self ? "t" : "f" }
    public func appendArrayElement(to out: inout [UInt8]) { out.append(self ? UInt8(ascii: "t") : UInt8(ascii: "f")) }
    public static var binaryType: UInt32? { 16 }  // bool
    public func appendBinaryElement(to array: inout BinaryArray) { array.appendElement(bigEndian: UInt8(self ? 1 : 0)) }
}
extension UUID: PostgresEncodable {
    public var postgresText: String? { lowercasedString }
    public func appendArrayElement(to out: inout [UInt8]) { appendLowercase(to: &out) }
    public static var binaryType: UInt32? { 2950 }  // uuid
    public func appendBinaryElement(to array: inout BinaryArray) {
        withUnsafeBytes(of: uuid) { array.appendElement(bytes: $0) }
    }
}
extension Date: PostgresEncodable {
    /// Microsecond precision, UTC, as PostgreSQL stores timestamptz.
    public var postgresText: String? { PostgresTimestamp.format(self) }
    public func appendArrayElement(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        PostgresTimestamp.append(self, to: &out)
        out.append(UInt8(ascii: "\""))
    }
    public static var binaryType: UInt32? { 1184 }  // timestamptz: microseconds since 2000-01-01 UTC
    public func appendBinaryElement(to array: inout BinaryArray) {
        array.appendElement(bigEndian: PostgresTimestamp.microseconds(self) - 946_684_800_000_000)
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public static var isArray: Bool { Wrapped.isArray }
    public var postgresText: String? { self.flatMap { $0.postgresText } }
    public func appendArrayElement(to out: inout [UInt8]) {
        if let value = self { value.appendArrayElement(to: &out) } else { out += ArrayLiteral.null }
    }
    public static var binaryType: UInt32? { Wrapped.binaryType }
    public func appendBinaryElement(to array: inout BinaryArray) {
        if let value = self { value.appendBinaryElement(to: &array) } else { array.appendNull() }
    }
}

/// JSON text sent as a `jsonb` parameter.
///
/// Kept as the bytes it is made from: events' data and metadata arrive as `Data`, and a batch's
/// insert copies them straight into its binary array (made into `String`s first, each was
/// validated and copied once more, twice per event).
public struct JSONB: PostgresEncodable, Hashable {
    /// The JSON text's UTF-8.
    public var bytes: Data
    public init(_ text: String) { self.bytes = Data(text.utf8) }
    public init(_ data: Data) { self.bytes = data }
    public var text: String { String(decoding: bytes, as: UTF8.self) }
    public var postgresText: String? { text }
    public static var binaryType: UInt32? { 3802 }  // jsonb: format version 1, then the text
    public func appendBinaryElement(to array: inout BinaryArray) { array.appendElement(utf8: bytes, prefix: 1) }
}

/// A one-dimensional array parameter (`text[]`, `bigint[]`, `uuid[]`, `jsonb[]`, …).
extension Array: PostgresEncodable where Element: PostgresEncodable {
    public static var isArray: Bool { true }
    public var postgresText: String? {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(count * 40 + 2)
        // Indices rather than `enumerated()`: called through `any PostgresEncodable`, so not
        // specialized, and the enumerated iterator looked up generic metadata per element
        // (about 4% of the server's CPU per SendWalk, in the projectors' and the appends' arrays).
        for index in indices {
            if index > startIndex { out.append(UInt8(ascii: ",")) }
            self[index].appendArrayElement(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    // Arrays arrive here as `any PostgresEncodable`, unspecialized: every element's
    // `appendBinaryElement` went through witness tables and generic metadata. The element types
    // the log and the projectors send are specialized, and the generic body checks for them first.
    @_specialize(where Element == String)
    @_specialize(where Element == Int64)
    @_specialize(where Element == Int)
    @_specialize(where Element == UUID)
    @_specialize(where Element == JSONB)
    @_specialize(where Element == Bool)
    @_specialize(where Element == Double)
    @_specialize(where Element == Date)
    @_specialize(where Element == Data)
    @_specialize(where Element == String?)
    @_specialize(where Element == Int64?)
    @_specialize(where Element == UUID?)
    @_specialize(where Element == Double?)
    @_specialize(where Element == Date?)
    public func binaryArray(of elementType: UInt32) -> BinaryArray? {
        guard Element.binaryType == elementType else { return nil }
        var array = BinaryArray(elementType: elementType, count: count)
        for index in indices { self[index].appendBinaryElement(to: &array) }
        return array
    }
}

/// An array parameter of values known only as `any PostgresEncodable` (a column gathered from
/// rows built apart, as the group commit gathers the guarded rows of a batch).
public struct PostgresArray: PostgresEncodable {
    public var elements: [any PostgresEncodable]
    public init(_ elements: [any PostgresEncodable]) { self.elements = elements }
    public static var isArray: Bool { true }
    public var postgresText: String? {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(elements.count * 40 + 2)
        for index in elements.indices {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            elements[index].appendArrayElement(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    public func binaryArray(of elementType: UInt32) -> BinaryArray? {
        guard elements.allSatisfy({ type(of: $0).binaryType == elementType }) else { return nil }
        var array = BinaryArray(elementType: elementType, count: elements.count)
        for index in elements.indices { elements[index].appendBinaryElement(to: &array) }
        return array
    }
}

/// Reads and writes PostgreSQL's ISO timestamptz text (`2026-11-23 07:00:00.123456+00`).
public enum PostgresTimestamp {
    public static func format(_ date: Date) -> String {
        var out: [UInt8] = []
        append(date, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Microseconds since 1970, as the text and the binary forms round them.
    static func microseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }

    /// Writes `YYYY-MM-DD HH:MM:SS.ffffff+00` straight into bytes.
    static func append(_ date: Date, to out: inout [UInt8]) {
        let micros = microseconds(date)
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let c = gmtime_r_components(seconds)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(c.year, 4)
        out.append(UInt8(ascii: "-"))
        digits(c.month, 2)
        out.append(UInt8(ascii: "-"))
        digits(c.day, 2)
        out.append(UInt8(ascii: " "))
        digits(c.hour, 2)
        out.append(UInt8(ascii: ":"))
        digits(c.minute, 2)
        out.append(UInt8(ascii: ":"))
        digits(c.second, 2)
        out.append(UInt8(ascii: "."))
        digits(Int(micros - seconds * 1_000_000), 6)
        out += Array("+00".utf8)
    }

    /// Parses the server's output with DateStyle ISO and TimeZone UTC (set on every connection).
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8(parse)
    }

    /// A timestamp from a cell's bytes.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + count] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 19,
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2)
        else { return nil }
        var index = 19
        var micros = 0
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if digits < 6 {
                    micros = micros * 10 + Int(bytes[index] - 48)
                    digits += 1
                }
                index += 1
            }
            while digits < 6 {
                micros *= 10
                digits += 1
            }
        }
        var offsetSeconds = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            let hours = number(index + 1, 2) ?? 0
            var minutes = 0
            if index + 3 < bytes.count, bytes[index + 3] == UInt8(ascii: ":") { minutes = number(index + 4, 2) ?? 0 }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        }
        let days = CivilDate.days(year: year, month: month, day: day)
        let epochSeconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return Date(timeIntervalSince1970: Double(epochSeconds) + Double(micros) / 1_000_000)
    }

    struct Components { var year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0 }

    static func gmtime_r_components(_ epochSeconds: Int64) -> Components {
        let days = Int(epochSeconds >= 0 ? epochSeconds / 86_400 : (epochSeconds - 86_399) / 86_400)
        let secondsOfDay = Int(epochSeconds - Int64(days) * 86_400)
        let (year, month, day) = CivilDate.date(days: days)
        return Components(
            year: year,
            month: month,
            day: day,
            hour: secondsOfDay / 3600,
            minute: secondsOfDay % 3600 / 60,
            second: secondsOfDay % 60
        )
    }
}

/// `bytea` parameters, in PostgreSQL's hex format.
extension Data: PostgresEncodable {
    public static var binaryType: UInt32? { 17 }  // bytea
    public func appendBinaryElement(to array: inout BinaryArray) { array.appendElement(bytes: self) }
    public var postgresText: String? {
        var out = [UInt8]("\\x".utf8)
        out.reserveCapacity(2 + count * 2)
        Hex.append(self, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
