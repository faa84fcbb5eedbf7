import Foundation
import XCTest

@testable import EventLog

/// Derived ids are stored in the log: a retried command finds its first run by them, so their
/// derivation may never change. The expected values are SHA-256 computed elsewhere (Python's
/// `hashlib`), the first 16 bytes with the version 8 and RFC 4122 variant bits set.
final class DerivedIDTests: XCTestCase {
    func testEventIDsAreTheCommandIDAndIndexHashed() {
        let commandID = UUID(uuidString: "0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3")!
        XCTAssertEqual(
            EventLog.eventIDs(commandID: commandID, count: 3).map { $0.uuidString.lowercased() },
            [
                "e0a72dd0-9248-8194-b10d-d4a4722a0cfa",
                "79063419-247c-8d61-99c5-a0af23c46ecd",
                "bf5ab3c9-f8f7-8228-8ba6-581385b19927",
            ]
        )
        XCTAssertEqual(EventLog.eventIDs(commandID: commandID, count: 0), [])
    }

    func testDerivedIDOfText() {
        XCTAssertEqual(
            EventLog.derivedUUID(Array("expire-walk:e0000000-0000-4000-8000-000000000001".utf8)).uuidString.lowercased(),
            "0aaeab3e-fdee-81fb-8540-5325f30e0dc2"
        )
    }
}
