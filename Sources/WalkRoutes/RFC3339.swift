/// RFC 3339 times as GPX and the API write them, read and written without Foundation's
/// formatters (which are slow and locale-bound).
public enum RFC3339 {
    /// Seconds since 1970 of `text` (`2026-11-25T10:00:00Z`, optional fraction, `Z` or ±hh:mm),
    /// or nil when it is not such a time.
    public static func parse<Bytes: Collection<UInt8>>(_ text: Bytes) -> Double? where Bytes.Index == Int {
        let b = Array(text)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var v = 0
            for i in at..<(at + count) {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        guard b.count >= 20, let year = digits(0, 4), b[4] == 0x2D, let month = digits(5, 2), b[7] == 0x2D, let day = digits(8, 2),
            b[10] == 0x54 || b[10] == 0x74, let hour = digits(11, 2), b[13] == 0x3A, let minute = digits(14, 2), b[16] == 0x3A,
            let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                fraction += Double(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i > start, i - start <= 12 else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == 0x5A || b[i] == 0x7A {
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A, let om = digits(i + 4, 2), oh < 24, om < 60 else {
                return nil
            }
            offset = (oh * 60 + om) * 60 * (b[i] == 0x2D ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59) - offset) + fraction
    }

    /// `2026-11-25T10:00:00Z`, with milliseconds when the time has them.
    public static func format(_ seconds: Double) -> String {
        let millis = Int((seconds * 1_000).rounded())
        let whole = Int((Double(millis) / 1_000).rounded(.down))
        let ms = millis - whole * 1_000
        let days = Int((Double(whole) / 86_400).rounded(.down))
        let secondOfDay = whole - days * 86_400
        let (y, m, d) = civilFromDays(days)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var text = "\(y)-\(two(m))-\(two(d))T\(two(secondOfDay / 3_600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
        if ms != 0 {
            text += "." + String(String(ms + 1_000).dropFirst())
        }
        return text + "Z"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Howard Hinnant's days_from_civil.
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Howard Hinnant's civil_from_days.
    public static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
