import Foundation
import UUIDText
import XCTest

/// The byte-by-byte UUID text agrees with Foundation's and refuses what Foundation refuses.
final class UUIDTextTests: XCTestCase {
    func testRendersAndParsesLikeFoundation() {
        for _ in 0..<1000 {
            let id = UUID()
            XCTAssertEqual(id.lowercasedString, id.uuidString.lowercased())
            var bytes: [UInt8] = []
            id.appendLowercase(to: &bytes)
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), id.lowercasedString)
            XCTAssertEqual(UUID(text: id.lowercasedString), id)
            XCTAssertEqual(UUID(text: id.uuidString), id, "upper case is read too")
        }
    }

    func testRefusesEverythingButTheCanonicalForm() {
        let good = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
        XCTAssertNotNil(UUID(text: good))
        for bad in [
            "", "0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d", "{\(good)}", " \(good)", "\(good) ", String(good.dropLast()),
            "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4g", "0a1b2c3d+4e5f-4a6b-8c7d-9e0f1a2b3c4d", "0a1b2c3-d4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4\u{0}", "０a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        ] {
            XCTAssertNil(UUID(text: bad), bad)
            XCTAssertNil(UUID(uuidString: bad), "Foundation refuses \(bad) too")
        }
    }
}
