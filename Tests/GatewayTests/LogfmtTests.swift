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

    func testAKeyGivenAgainIsWrittenOnceWithItsLastValue() {
        let lines = Lines()
        var logger = Logger(label: "test") { label in
            LogfmtLogHandler(label: label, metadataProvider: Logger.MetadataProvider { ["b": "provided", "c": "provided"] }) { line in
                lines.all.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
            }
        }
        logger[metadataKey: "a"] = "handler"
        logger[metadataKey: "b"] = "handler"
        logger[metadataKey: "c"] = "handler"
        logger.info("served", metadata: ["c": "event", "d": "event"])
        let written = lines.all.withLock { $0 }
        XCTAssertEqual(written.count, 1)
        XCTAssertTrue(written[0].hasSuffix(" info test served a=handler b=provided c=event d=event\n"), written[0])
    }

    /// The request log's line, given its pairs in key order: the handler's metadata and the
    /// provider's merged in by key, a key in both written once with the given value, and
    /// nothing below the handler's level.
    func testOrderedPairsAreMergedWithTheHandlersMetadata() {
        let lines = Lines()
        var handler = LogfmtLogHandler(label: "test", metadataProvider: Logger.MetadataProvider { ["provided": "p"] }) { line in
            lines.all.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
        }
        handler[metadataKey: "request_id"] = "abc"
        handler[metadataKey: "method"] = "stale"
        handler[metadataKey: "zone"] = "z"
        handler[metadataKey: "app"] = "a"
        handler.log(level: .debug, message: "request", orderedPairs: [("method", "GET")])
        handler.log(level: .info, message: "request", orderedPairs: [("method", "GET"), ("ms", "1.934"), ("status", "200")])
        let written = lines.all.withLock { $0 }
        XCTAssertEqual(written.count, 1, "\(written)")
        XCTAssertTrue(
            written[0].hasSuffix(" info test request app=a method=GET ms=1.934 provided=p request_id=abc status=200 zone=z\n"),
            written[0]
        )
    }

    /// A request's logger is copied and given its request id: a handler of three words is held
    /// inline by the logger's existential instead of in a box of its own made for each copy.
    func testTheHandlerFitsAnExistentialsInlineBuffer() {
        XCTAssertLessThanOrEqual(MemoryLayout<LogfmtLogHandler>.size, 3 * MemoryLayout<Int>.size)
    }

    func testRequestDurationsAreMillisecondsToTheMicrosecond() {
        XCTAssertEqual(RequestLogMiddleware.milliseconds(.microseconds(1934)), "1.934")
        XCTAssertEqual(RequestLogMiddleware.milliseconds(.microseconds(7)), "0.007")
        XCTAssertEqual(RequestLogMiddleware.milliseconds(.seconds(12) + .microseconds(50)), "12000.050")
        XCTAssertEqual(RequestLogMiddleware.milliseconds(.zero), "0.000")
    }
}

private final class Lines: Sendable {
    let all = Mutex<[String]>([])
}

/// Standard error's batches: info lines wait, a warning takes everything before it along, and
/// the order of lines never changes.
final class StandardErrorLogTests: XCTestCase {
    func testLinesGoOutAtOnceUntilBufferingStarts() throws {
        let (pipe, log) = Self.log(buffering: false)
        log.write(Array("one\n".utf8), level: .info)
        XCTAssertEqual(try Self.available(pipe), "one\n")
    }

    func testBufferedInfoLinesWaitAndAWarningTakesThemAlongInOrder() throws {
        let (pipe, log) = Self.log(buffering: true)
        log.write(Array("first\n".utf8), level: .info)
        log.write(Array("second\n".utf8), level: .notice)
        XCTAssertEqual(try Self.available(pipe), "", "info and notice lines wait")
        log.write(Array("trouble\n".utf8), level: .warning)
        XCTAssertEqual(try Self.available(pipe), "first\nsecond\ntrouble\n")
        log.write(Array("later\n".utf8), level: .info)
        XCTAssertEqual(try Self.available(pipe), "")
        log.flush()
        XCTAssertEqual(try Self.available(pipe), "later\n")
    }

    func testBufferedLinesAreWrittenWithinTheInterval() throws {
        let (pipe, log) = Self.log(buffering: true, interval: .milliseconds(20))
        log.write(Array("waiting\n".utf8), level: .info)
        // The writer thread's next round; `availableData` blocks until bytes arrive.
        XCTAssertEqual(String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self), "waiting\n")
    }

    func testManyWaitingBytesAreWrittenWithoutWaitingForTheInterval() throws {
        let (pipe, log) = Self.log(buffering: true)
        let line = Array(repeating: UInt8(ascii: "x"), count: 1023) + [UInt8(ascii: "\n")]
        for _ in 0..<(StandardErrorLog.capacity / line.count - 1) { log.write(line, level: .info) }
        XCTAssertEqual(try Self.available(pipe), "")
        log.write(line, level: .info)
        XCTAssertEqual(try Self.available(pipe).utf8.count, StandardErrorLog.capacity)
    }

    /// A log writing into a new pipe; the interval is long enough not to fire during a test
    /// unless told otherwise.
    private static func log(buffering: Bool, interval: Duration = .seconds(3600)) -> (Pipe, StandardErrorLog) {
        let pipe = Pipe()
        let log = StandardErrorLog(descriptor: pipe.fileHandleForWriting.fileDescriptor, interval: interval)
        if buffering { log.startBuffering() }
        return (pipe, log)
    }

    /// What the pipe holds now, without waiting for more.
    private static func available(_ pipe: Pipe) throws -> String {
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
