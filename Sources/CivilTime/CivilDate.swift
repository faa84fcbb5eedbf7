/// Proleptic Gregorian dates and days since 1970-01-01, converted both ways with Howard
/// Hinnant's algorithms (exact for every year, no calendar, locale or platform involved).
///
/// A module of its own, with no dependencies, because its two users must not depend on each
/// other: `Domain` (the log's and the API's RFC 3339 timestamps) stays free of infrastructure,
/// and `Postgres` (timestamptz text) knows nothing of the app.
///
/// ```swift
/// CivilDate.days(year: 2026, month: 11, day: 23)  // 20_415
/// CivilDate.date(days: 20_415)                    // (2026, 11, 23)
/// ```
public enum CivilDate {
    /// Days from 1970-01-01 to the date (negative before it). `month` is 1–12, `day` 1–31.
    @inlinable
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date `days` after 1970-01-01 (before it when negative).
    @inlinable
    public static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Division rounding toward negative infinity (Swift's `/` rounds toward zero).
    @inlinable
    public static func floorDiv(_ a: Int, _ b: Int) -> Int {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }
}
