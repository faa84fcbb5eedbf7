import Foundation
import XCTest

@testable import EventLog

/// Which appends of a group-committed batch share its one insert (`AppendPlan.sharing`): no
/// database, only the rule. `GroupCommitTests` race real appends through it.
final class AppendSharingTests: XCTestCase {
    /// One event on `stream` (new), reading `reads` at the versions given.
    private func plan(writes stream: String, reads: [String: ExpectedVersion] = [:]) -> AppendPlan {
        var expectations = reads
        expectations[stream] = .noStream
        return AppendPlan(
            commandID: UUID(),
            expectations: expectations,
            events: [NewEvent(stream: stream, type: "thing_happened", data: Data("{}".utf8))]
        )
    }

    func testABatchOfSingleEventAppendsSharesOneInsert() {
        let walks = (0..<3).map { plan(writes: "walk-\($0)", reads: ["pair": .exactly(4)]) }
        let (shared, after) = AppendPlan.sharing(walks)
        XCTAssertEqual(shared, [0, 1, 2], "appends that only read a common stream share")
        XCTAssertEqual(after, [])
    }

    func testALoneSingleEventAppendKeepsItsOwnInsert() {
        XCTAssertEqual(AppendPlan.sharing([plan(writes: "walk-0")]).after, [0])
        // Two on one stream: the second goes after the first, which is then alone.
        let (shared, after) = AppendPlan.sharing([plan(writes: "chat-0"), plan(writes: "chat-0")])
        XCTAssertEqual(shared, [])
        XCTAssertEqual(after, [0, 1], "in the batch's order")
    }

    func testAnAppendTouchingAStreamASharerWritesGoesAfterIt() {
        let plans = [
            plan(writes: "a"),
            plan(writes: "b", reads: ["a": .exactly(1)]),  // reads what the first writes
            plan(writes: "a"),  // writes what the first writes
            plan(writes: "c", reads: ["pair": .any]),
        ]
        let (shared, after) = AppendPlan.sharing(plans)
        XCTAssertEqual(shared, [0, 3])
        XCTAssertEqual(after, [1, 2])
    }
}
