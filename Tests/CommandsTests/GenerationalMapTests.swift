import PersonalData
import XCTest

/// The bounded map behind this process's caches.
final class GenerationalMapTests: XCTestCase {
    func testAnEntryReadFromTheOldGenerationOutlivesItsNeighbours() {
        var map = GenerationalMap<Int, String>(capacity: 3)
        for key in 0..<3 { map.set("v\(key)", for: key) }
        map.set("v3", for: 3)  // 0, 1, 2 are the old generation now
        XCTAssertEqual(map.value(for: 1), "v1")  // back into the young one
        for key in 4..<6 { map.set("v\(key)", for: key) }  // the young one is full again: 0 and 2 go
        map.set("v6", for: 6)
        XCTAssertEqual(map.peek(1), "v1")
        XCTAssertNil(map.peek(0))
        XCTAssertNil(map.peek(2))
        XCTAssertLessThanOrEqual(map.count, 6)
    }

    func testSettingAKeyAgainReplacesItWhereverItStood() {
        var map = GenerationalMap<Int, String>(capacity: 2)
        map.set("a", for: 1)
        map.set("b", for: 2)
        map.set("c", for: 3)  // 1 and 2 are old
        map.set("a2", for: 1)
        XCTAssertEqual(map.value(for: 1), "a2")
        XCTAssertEqual(map.count, 3)
    }

    func testFilterKeepsOnlyWhatItAccepts() {
        var map = GenerationalMap<Int, Bool>(capacity: 2)
        for key in 0..<4 { map.set(key.isMultiple(of: 2), for: key) }
        map.filter { $0 }
        XCTAssertEqual(map.peek(0), true)
        XCTAssertEqual(map.peek(2), true)
        XCTAssertNil(map.peek(1))
        XCTAssertNil(map.peek(3))
        XCTAssertEqual(map.count, 2)
    }
}
