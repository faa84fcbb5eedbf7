import Foundation
import XCTest

@testable import Domain

/// Times are RFC 3339 UTC with milliseconds, independent of locale and platform.
final class TimestampTests: XCTestCase {
    func testFormatIsUTCWithMilliseconds() {
        XCTAssertEqual(Timestamp.string(from: t0), "2027-01-15T08:00:00.000Z")
        XCTAssertEqual(Timestamp.string(from: t0.addingTimeInterval(0.007)), "2027-01-15T08:00:00.007Z")
        XCTAssertEqual(Timestamp.string(from: Date(timeIntervalSince1970: 951_782_400)), "2000-02-29T00:00:00.000Z")
        XCTAssertEqual(Timestamp.string(from: Date(timeIntervalSince1970: -0.5)), "1969-12-31T23:59:59.500Z")
        XCTAssertEqual(Timestamp.string(from: Date(timeIntervalSince1970: 1_795_444_693.123)), "2026-11-23T14:38:13.123Z")
        // The fixed-width path ends at year 9999; later years keep all their digits.
        XCTAssertEqual(Timestamp.string(from: Date(timeIntervalSince1970: -62_135_596_800)), "0001-01-01T00:00:00.000Z")
        XCTAssertEqual(Timestamp.string(from: Date(timeIntervalSince1970: 253_402_300_799.999)), "9999-12-31T23:59:59.999Z")
        XCTAssertEqual(Timestamp.string(from: Date(timeIntervalSince1970: 253_402_300_800)), "10000-01-01T00:00:00.000Z")
    }

    func testParseRoundTrips() {
        for text in ["2027-01-15T08:00:00.000Z", "2000-02-29T23:59:59.999Z", "1969-12-31T23:59:59.500Z"] {
            XCTAssertEqual(Timestamp.date(from: text).map(Timestamp.string(from:)), text)
        }
        XCTAssertEqual(Timestamp.date(from: "2027-01-15T08:00:00Z"), t0)
        XCTAssertEqual(Timestamp.date(from: "2027-01-15T08:00:00.5Z"), t0.addingTimeInterval(0.5))
    }

    func testParseRejectsOtherFormats() {
        for text in [
            "", "2027-01-15", "2027-01-15T08:00:00.000+01:00", "2027-13-15T08:00:00Z", "2027-01-15T08:00:00.Z", "x027-01-15T08:00:00Z",
        ] {
            XCTAssertNil(Timestamp.date(from: text), text)
        }
    }
}
