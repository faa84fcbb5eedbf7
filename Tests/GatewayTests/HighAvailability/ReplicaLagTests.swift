import Postgres
import XCTest

@testable import Gateway

/// The replica's lag as `ReplicaReads` measures it: how long WAL seen received has waited to be
/// replayed, never the age of the last replayed commit (an idle primary writes nothing).
final class ReplicaLagTests: XCTestCase {
    func replicas() -> ReplicaReads {
        ReplicaReads(pool: ConnectionPool(connectionString: "host=/nonexistent"), maxLag: .seconds(5))
    }

    func testAnIdleStandbyWithEverythingReplayedHasNoLag() {
        let reads = replicas()
        let start = ContinuousClock.now
        XCTAssertEqual(reads.lag(inRecovery: true, receiving: true, received: 100, replayed: 100, at: start), .zero)
        XCTAssertEqual(reads.lag(inRecovery: true, receiving: true, received: 100, replayed: 100, at: start + .seconds(600)), .zero)
    }

    func testWALWaitingToBeReplayedCountsFromWhenItWasFirstSeen() {
        let reads = replicas()
        let start = ContinuousClock.now
        XCTAssertEqual(reads.lag(inRecovery: true, receiving: true, received: 200, replayed: 100, at: start), .zero)
        // More arrives; the oldest unreplayed sighting sets the lag.
        XCTAssertEqual(reads.lag(inRecovery: true, receiving: true, received: 300, replayed: 150, at: start + .seconds(3)), .seconds(3))
        XCTAssertEqual(reads.lag(inRecovery: true, receiving: true, received: 300, replayed: 150, at: start + .seconds(6)), .seconds(6))
        // Past the first sighting: the second one counts.
        XCTAssertEqual(reads.lag(inRecovery: true, receiving: true, received: 300, replayed: 200, at: start + .seconds(7)), .seconds(4))
        XCTAssertEqual(reads.lag(inRecovery: true, receiving: true, received: 300, replayed: 300, at: start + .seconds(8)), .zero)
    }

    func testAStandbyWithoutAWALReceiverIsLeftOutAndAPrimaryHasNoLag() {
        let reads = replicas()
        let now = ContinuousClock.now
        XCTAssertGreaterThan(reads.lag(inRecovery: true, receiving: false, received: 100, replayed: 100, at: now), .seconds(86400))
        XCTAssertEqual(reads.lag(inRecovery: false, receiving: false, received: 0, replayed: 0, at: now), .zero)
    }
}
