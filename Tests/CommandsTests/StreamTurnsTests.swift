import Domain
import Foundation
import Synchronization
import XCTest

@testable import Commands

/// Turns on hot streams: one holder per stream at a time, first come first served, and a
/// stream nobody holds is not reported as held.
final class StreamTurnsTests: XCTestCase {
    private let chat = StreamName.chat(UUID(), UUID())
    private let walk = StreamName.walk(UUID())

    func testAStreamIsHeldFromEnterToLeave() async {
        let turns = StreamTurns()
        XCTAssertNil(turns.held(among: [chat, walk]))
        await turns.enter(chat)
        XCTAssertEqual(turns.held(among: [walk, chat]), chat)
        XCTAssertNil(turns.held(among: [walk]))
        turns.leave(chat)
        XCTAssertNil(turns.held(among: [chat, walk]))
    }

    func testWaitersTakeTheirTurnsOneAtATimeInTheOrderTheyCame() async {
        let turns = StreamTurns()
        let probe = Probe()
        await turns.enter(chat)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { [chat] in
                    await turns.enter(chat)
                    if probe.inside.add(1, ordering: .relaxed).newValue > 1 { probe.overlaps.add(1, ordering: .relaxed) }
                    probe.order.withLock { $0.append(index) }
                    await Task.yield()
                    probe.inside.subtract(1, ordering: .relaxed)
                    turns.leave(chat)
                }
                // Each in line before the next starts.
                while turns.waiting(for: chat) < index + 1 { await Task.yield() }
            }
            turns.leave(chat)
        }
        XCTAssertEqual(probe.overlaps.load(ordering: .relaxed), 0, "one holder at a time")
        XCTAssertEqual(probe.order.withLock { $0 }, Array(0..<20), "first come, first served")
        XCTAssertNil(turns.held(among: [chat]), "the last one out frees the stream")
    }

    /// What the holders saw, shared by the tasks.
    private final class Probe: Sendable {
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let order = Mutex<[Int]>([])
    }
}
