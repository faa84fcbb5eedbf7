import Foundation
import PersonalData
import Synchronization
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

    /// The caller holds its cache's lock while the map turns over: the dropped generation is
    /// freed on another thread, not by the caller.
    func testADroppedGenerationIsFreedOffTheCallersThread() {
        let freed = expectation(description: "the dropped generation's values are freed")
        freed.expectedFulfillmentCount = 2
        let freedByCaller = Counter()
        var map = GenerationalMap<Int, Tracked>(capacity: 2)
        for key in 0..<2 { map.set(Tracked(freed, freedByCaller), for: key) }
        for key in 2..<5 { map.set(Tracked(nil, freedByCaller), for: key) }  // 0 and 1 are dropped at 4
        wait(for: [freed], timeout: 30)
        XCTAssertEqual(freedByCaller.value.withLock { $0 }, 0)
        XCTAssertNil(map.peek(0))
        XCTAssertNil(map.peek(1))
        XCTAssertNotNil(map.peek(2))
        XCTAssertNotNil(map.peek(4))
    }

    func testRemoveAllAndFilterFreeOffTheCallersThread() {
        let freed = expectation(description: "removed values are freed")
        freed.expectedFulfillmentCount = 3
        let freedByCaller = Counter()
        var map = GenerationalMap<Int, Tracked>(capacity: 2)
        for key in 0..<3 { map.set(Tracked(freed, freedByCaller, keep: key == 0), for: key) }
        map.filter(\.keep)  // 1 and 2 go
        XCTAssertEqual(map.count, 1)
        map.removeAll()  // 0 goes
        XCTAssertEqual(map.count, 0)
        wait(for: [freed], timeout: 30)
        XCTAssertEqual(freedByCaller.value.withLock { $0 }, 0)
    }

    /// A value that says when, and on which thread, it is freed (XCTest runs tests on the main
    /// thread).
    private final class Tracked: Sendable {
        let freed: XCTestExpectation?
        let freedByCaller: Counter
        let keep: Bool

        init(_ freed: XCTestExpectation?, _ freedByCaller: Counter, keep: Bool = false) {
            (self.freed, self.freedByCaller, self.keep) = (freed, freedByCaller, keep)
        }

        deinit {
            if Thread.isMainThread { freedByCaller.value.withLock { $0 += 1 } }
            freed?.fulfill()
        }
    }

    private final class Counter: Sendable {
        let value = Mutex(0)
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
