import Domain
import Foundation
import XCTest

@testable import Commands

/// Which pair a mate request belongs to, as this process remembers it: bounded, and the newest
/// requests (those about to be accepted) are always known.
final class RequestPairsTests: XCTestCase {
    func testTheNewestRequestsAreKnownHoweverManyCameBefore() {
        let pairs = RequestPairs(capacity: 100)
        var requests: [(UUID, MatePair)] = []
        for _ in 0..<1_000 {
            let request = (UUID(), MatePair(UUID(), UUID()))
            requests.append(request)
            pairs.remember(request.0, request.1)
        }
        // At least the last `capacity` are held: a full map once forgot everything at once.
        for (request, pair) in requests.suffix(100) { XCTAssertEqual(pairs.pair(of: request), pair) }
        // At most two generations are held.
        XCTAssertNil(pairs.pair(of: requests[0].0))
        XCTAssertNil(pairs.pair(of: requests[799].0))
    }

    func testARequestLookedUpStaysWhileNewOnesPassThrough() {
        let pairs = RequestPairs(capacity: 100)
        let first = (UUID(), MatePair(UUID(), UUID()))
        pairs.remember(first.0, first.1)
        for _ in 0..<10 {
            for _ in 0..<60 { pairs.remember(UUID(), MatePair(UUID(), UUID())) }
            XCTAssertEqual(pairs.pair(of: first.0), first.1)
        }
    }
}
