import Foundation
import Postgres

/// Array parameters for the projectors' multi-row statements, written straight into UTF-8
/// bytes. The generic `Array.postgresText` goes character by character through `String`, which
/// cost more than PostgreSQL's own work in a rebuild; batches send tens of thousands of values.
/// The output is the same PostgreSQL array literal text.
public struct ArrayParameter: PostgresEncodable {
    public let postgresText: String?

    private init(_ bytes: [UInt8]) { postgresText = String(decoding: bytes, as: UTF8.self) }

    private static func build<T>(_ values: [T], _ element: (T, inout [UInt8]) -> Void) -> ArrayParameter {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(values.count * 40 + 2)
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            element(value, &out)
        }
        out.append(UInt8(ascii: "}"))
        return ArrayParameter(out)
    }

    private static let null = Array("NULL".utf8)
    private static let hex = Array("0123456789abcdef".utf8)

    public static func uuids(_ values: [UUID]) -> ArrayParameter { build(values) { appendUUID($0, &$1) } }
    public static func uuids(_ values: [UUID?]) -> ArrayParameter {
        build(values) { value, out in if let value { appendUUID(value, &out) } else { out += null } }
    }
    public static func texts(_ values: [String]) -> ArrayParameter { build(values) { appendQuoted($0, &$1) } }
    public static func texts(_ values: [String?]) -> ArrayParameter {
        build(values) { value, out in if let value { appendQuoted(value, &out) } else { out += null } }
    }
    public static func dates(_ values: [Date]) -> ArrayParameter { build(values) { appendDate($0, &$1) } }
    public static func dates(_ values: [Date?]) -> ArrayParameter {
        build(values) { value, out in if let value { appendDate(value, &out) } else { out += null } }
    }
    public static func integers<I: BinaryInteger>(_ values: [I]) -> ArrayParameter { build(values) { $1 += Array(String($0).utf8) } }
    public static func doubles(_ values: [Double?]) -> ArrayParameter {
        build(values) { value, out in if let value { out += Array(value.description.utf8) } else { out += null } }
    }
    public static func bools(_ values: [Bool]) -> ArrayParameter { build(values) { $1.append($0 ? UInt8(ascii: "t") : UInt8(ascii: "f")) } }

    static func appendUUID(_ id: UUID, _ out: inout [UInt8]) {
        withUnsafeBytes(of: id.uuid) { bytes in
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
    }

    /// Always quoted: backslash and double quote escaped, anything else as is.
    static func appendQuoted(_ text: String, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00`, microseconds, as `PostgresTimestamp.format` writes it.
    static func appendDate(_ date: Date, _ out: inout [UInt8]) {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let fraction = Int(micros - seconds * 1_000_000)
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        // Howard Hinnant's civil-from-days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
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
        out.append(UInt8(ascii: "\""))
        digits(year, 4); out.append(UInt8(ascii: "-")); digits(month, 2); out.append(UInt8(ascii: "-")); digits(day, 2)
        out.append(UInt8(ascii: " "))
        digits(secondOfDay / 3600, 2); out.append(UInt8(ascii: ":")); digits(secondOfDay % 3600 / 60, 2)
        out.append(UInt8(ascii: ":")); digits(secondOfDay % 60, 2); out.append(UInt8(ascii: ".")); digits(fraction, 6)
        out += Array("+00\"".utf8)
    }
}
