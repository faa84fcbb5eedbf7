import CivilTime
import Foundation

/// The one time format of the log and the API: RFC 3339, UTC, milliseconds,
/// e.g. `2026-11-23T07:00:00.000Z`.
///
/// Written by hand (civil-from-days arithmetic) rather than with a formatter so the output
/// never depends on locale, calendar settings or platform, and the stored JSON stays byte-stable.
public enum Timestamp {
    /// `date` rounded to whole milliseconds, the precision the log keeps.
    /// Decisions use it so an event in memory equals the same event read back from the log.
    public static func roundedToMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds(date)) / 1000)
    }

    /// Renders `date` as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static func string(from date: Date) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(24)
        appendUTF8(date, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the UTF-8 bytes of `string(from:)` (answers write many timestamps; this makes
    /// no intermediate strings).
    public static func appendUTF8(_ date: Date, to text: inout [UInt8]) {
        let ms = milliseconds(date)
        let days = CivilDate.floorDiv(ms, 86_400_000)
        let msOfDay = ms - days * 86_400_000
        let (y, m, d) = CivilDate.date(days: days)
        let h = msOfDay / 3_600_000
        let min = msOfDay / 60_000 % 60
        let s = msOfDay / 1000 % 60
        let milli = msOfDay % 1000
        // The year may be any width; the 20 bytes after it never vary in width and are written
        // in place, then appended at once.
        appendDigits(y, 4, &text)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            func put(_ separator: Unicode.Scalar, _ value: Int, _ width: Int, at offset: Int) {
                buffer[offset] = UInt8(ascii: separator)
                var rest = value
                for index in stride(from: offset + width, to: offset, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put("-", m, 2, at: 0)
            put("-", d, 2, at: 3)
            put("T", h, 2, at: 6)
            put(":", min, 2, at: 9)
            put(":", s, 2, at: 12)
            put(".", milli, 3, at: 15)
            buffer[19] = UInt8(ascii: "Z")
            text.append(contentsOf: UnsafeBufferPointer(buffer))
        }
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z`; `nil` for anything else.
    public static func date(from string: String) -> Date? {
        let chars = Array(string.utf8)
        guard chars.count >= 20, chars.last == UInt8(ascii: "Z"),
            chars[4] == UInt8(ascii: "-"), chars[7] == UInt8(ascii: "-"),
            chars[10] == UInt8(ascii: "T") || chars[10] == UInt8(ascii: "t"),
            chars[13] == UInt8(ascii: ":"), chars[16] == UInt8(ascii: ":"),
            let y = number(chars[0..<4]), let mo = number(chars[5..<7]), let d = number(chars[8..<10]),
            let h = number(chars[11..<13]), let mi = number(chars[14..<16]), let s = number(chars[17..<19]),
            (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 60
        else { return nil }
        var fractionMs = 0
        let rest = chars[19..<(chars.count - 1)]
        if !rest.isEmpty {
            guard rest.first == UInt8(ascii: "."), rest.count >= 2, rest.count <= 10,
                let digits = number(rest.dropFirst())
            else { return nil }
            // Keep milliseconds only, as the log does.
            let width = rest.count - 1
            fractionMs = width >= 3 ? digits / pow10(width - 3) : digits * pow10(3 - width)
        }
        let days = CivilDate.days(year: y, month: mo, day: d)
        let ms = ((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + fractionMs
        return Date(timeIntervalSince1970: Double(ms) / 1000)
    }

    private static func milliseconds(_ date: Date) -> Int {
        Int((date.timeIntervalSince1970 * 1000).rounded())
    }

    private static func pow10(_ n: Int) -> Int { (0..<n).reduce(1) { acc, _ in acc * 10 } }

    /// `value` in decimal, zero-padded to `width` digits (wider values keep all their digits).
    private static func appendDigits(_ value: Int, _ width: Int, _ text: inout [UInt8]) {
        guard value >= 0 else {
            text.append(UInt8(ascii: "-"))
            return appendDigits(-value, width, &text)
        }
        var count = 1
        var divisor = 1
        while value / divisor >= 10 {
            divisor *= 10
            count += 1
        }
        if count < width { text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - count)) }
        while divisor > 0 {
            text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for b in bytes {
            guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(b - UInt8(ascii: "0"))
        }
        return value
    }
}
