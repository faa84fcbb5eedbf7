import Foundation
import UUIDText
import XCTest

@testable import Commands

/// Bearer secrets: 43 URL-safe characters carrying 256 bits, never the same twice.
final class SecretTokenTests: XCTestCase {
    func testATokenIs43URLSafeCharactersAndDecodesTo32Bytes() throws {
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let token = SecretToken.generate()
            XCTAssertEqual(token.utf8.count, 43, token)
            XCTAssertTrue(token.utf8.allSatisfy { $0.isURLSafeBase64 }, token)
            let standard = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="
            XCTAssertEqual(Data(base64Encoded: standard)?.count, 32, token)
            seen.insert(token)
        }
        XCTAssertEqual(seen.count, 1_000)
    }

    /// Every byte of the buffer is drawn: over 200 draws of 40 bytes, each place takes many values.
    func testSecureRandomFillsEveryPlace() {
        let draws = (0..<200).map { _ in SecureRandom.bytes(40) }
        XCTAssertTrue(draws.allSatisfy { $0.count == 40 })
        for place in 0..<40 {
            XCTAssertGreaterThan(Set(draws.map { $0[place] }).count, 100, "place \(place)")
        }
    }

    /// Draws come from one block shared by every thread, refilled from the kernel when spent:
    /// concurrent draws across many refills never hand out the same bytes twice, and a request
    /// too large for the block (sent to the kernel directly) is filled too.
    func testConcurrentDrawsAcrossBlocksNeverRepeat() async {
        let draws = await withTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<8 { group.addTask { (0..<2_500).map { _ in SecureRandom.bytes(16) } } }
            return await group.reduce(into: [[UInt8]]()) { $0 += $1 }
        }
        // 8 × 2,500 × 16 bytes: about 78 blocks of 4 KiB.
        XCTAssertEqual(draws.count, 20_000)
        XCTAssertEqual(Set(draws).count, 20_000)
        let large = SecureRandom.bytes(1_000)
        XCTAssertEqual(large.count, 1_000)
        XCTAssertGreaterThan(Set(large).count, 200)
    }

    /// Every byte value at every place: the bytes that encode to `+` and `/` come out as `-` and `_`.
    func testTheURLSafeAlphabetReplacesPlusAndSlashAndDropsPadding() {
        XCTAssertEqual(SecretToken.base64URL([0xFB, 0xFF, 0xBF]), "-_-_")
        XCTAssertEqual(SecretToken.base64URL([0xFF]), "_w")
        XCTAssertEqual(SecretToken.base64URL(Array("hello".utf8)), "aGVsbG8")
    }
}

extension UInt8 {
    fileprivate var isURLSafeBase64: Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || self == UInt8(ascii: "-") || self == UInt8(ascii: "_")
    }
}
