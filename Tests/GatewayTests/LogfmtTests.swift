import Foundation
import Logging
import Synchronization
import XCTest

@testable import Gateway

/// Log lines are single logfmt lines whose values cannot break the line or forge a pair.
final class LogfmtTests: XCTestCase {
    func testLinesAreLogfmtWithSortedKeys() {
        let line = LogfmtLogHandler.line(
            date: Date(timeIntervalSince1970: 1_800_000_000.25),
            level: .info,
            label: "sniffmeet.gateway",
            message: "request",
            metadata: ["status": "200", "method": "GET", "path": "/v1/me/mates"]
        )
        XCTAssertEqual(
            String(decoding: line, as: UTF8.self),
            "2027-01-15T08:00:00.250Z info sniffmeet.gateway request method=GET path=/v1/me/mates status=200\n"
        )
    }

    func testValuesThatNeedItAreQuotedAndEscaped() {
        let line = LogfmtLogHandler.line(
            date: Date(timeIntervalSince1970: 0),
            level: .warning,
            label: "x",
            message: "request not served",
            metadata: ["error": "bad \"thing\"\nstatus=500 \\ \u{1}", "empty": ""]
        )
        let text = String(decoding: line, as: UTF8.self)
        XCTAssertEqual(
            text,
            #"1970-01-01T00:00:00.000Z warning x "request not served" empty="" error="bad \"thing\"\nstatus=500 \\ \u0001""# + "\n"
        )
        XCTAssertEqual(text.filter { $0 == "\n" }.count, 1, "one line per event")
    }

    func testHandlerMergesMetadataAndHandsOverOneLine() {
        let lines = Lines()
        var logger = Logger(label: "test") { label in
            LogfmtLogHandler(label: label) { line in lines.all.withLock { $0.append(String(decoding: line, as: UTF8.self)) } }
        }
        logger[metadataKey: "request_id"] = "abc"
        logger.debug("hidden at info")
        logger.info("served", metadata: ["status": "201"])
        let written = lines.all.withLock { $0 }
        XCTAssertEqual(written.count, 1)
        XCTAssertTrue(written[0].hasSuffix(" info test served request_id=abc status=201\n"), written[0])
    }
}

private final class Lines: Sendable {
    let all = Mutex<[String]>([])
}
