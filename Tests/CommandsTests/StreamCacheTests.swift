import Domain
import Foundation
import XCTest

@testable import Commands

/// The cache of folded streams: bounded, and streams in use stay in it.
final class StreamCacheTests: XCTestCase {
    private func state(of stream: StreamName) -> StreamState { SniffMeet.initialState(of: stream) }

    /// Remembers `count` streams never seen before.
    private func addNewStreams(_ count: Int, to cache: StreamCache) {
        for _ in 0..<count {
            let stream = StreamName.user(UUID())
            cache.remember(stream, version: 1, state: state(of: stream))
        }
    }

    func testAStreamInUseStaysWhileABurstOfNewStreamsPassesThrough() {
        let cache = StreamCache(capacity: 100)
        let hot = StreamName.user(UUID())
        cache.remember(hot, version: 1, state: state(of: hot))
        // The hot stream is used every 50 new streams: always found, never reloaded.
        for round in 0..<20 {
            addNewStreams(50, to: cache)
            XCTAssertEqual(cache.entry(hot)?.version, 1, "lost after \(50 * (round + 1)) new streams")
        }
        XCTAssertEqual(cache.entry(hot)?.version, 1)
        XCTAssertLessThanOrEqual(cache.count, 200, "bounded by two generations")
    }

    func testAStreamNotUsedForTwoGenerationsIsForgotten() {
        let cache = StreamCache(capacity: 10)
        let cold = StreamName.user(UUID())
        cache.remember(cold, version: 3, state: state(of: cold))
        addNewStreams(25, to: cache)
        XCTAssertNil(cache.entry(cold))
        XCTAssertLessThanOrEqual(cache.count, 20)
    }

    /// A long stream costs its whole history to fold again: a burst of new streams, however
    /// large, leaves it where it is, and long streams are bounded on their own.
    func testABurstOfNewStreamsNeverPushesOutALongStream() {
        let cache = StreamCache(capacity: 10, longCapacity: 3, longStream: 50)
        let conversation = StreamName.user(UUID())
        cache.remember(conversation, version: 49, state: state(of: conversation))
        cache.remember(conversation, version: 120, state: state(of: conversation))
        addNewStreams(1_000, to: cache)
        XCTAssertEqual(cache.entry(conversation)?.version, 120)
        XCTAssertLessThanOrEqual(cache.count, 20 + 6)
        // Long streams push out long streams not in use.
        for _ in 0..<7 {
            let other = StreamName.user(UUID())
            cache.remember(other, version: 64, state: state(of: other))
        }
        XCTAssertNil(cache.entry(conversation))
        XCTAssertLessThanOrEqual(cache.count, 20 + 6)
    }

    func testAnOlderVersionNeverReplacesANewerOne() {
        let cache = StreamCache(capacity: 10)
        let stream = StreamName.user(UUID())
        cache.remember(stream, version: 5, state: state(of: stream))
        cache.remember(stream, version: 4, state: state(of: stream))
        XCTAssertEqual(cache.entry(stream)?.version, 5)
        // Also when the newer one has gone into the old generation.
        addNewStreams(10, to: cache)
        cache.remember(stream, version: 2, state: state(of: stream))
        XCTAssertEqual(cache.entry(stream)?.version, 5)
        cache.remember(stream, version: 6, state: state(of: stream))
        XCTAssertEqual(cache.entry(stream)?.version, 6)
    }

    /// The operators' setting bounds what is held, and the default is what `init()` holds.
    func testTheSettingBoundsTheStatesHeld() {
        let cache = StreamCache(states: 40)
        addNewStreams(200, to: cache)
        XCTAssertLessThanOrEqual(cache.count, 40)
        XCTAssertGreaterThanOrEqual(cache.count, 20)
        let standard = StreamCache(states: StreamCache.defaultStates)
        let plain = StreamCache()
        XCTAssertEqual(standard.capacity, plain.capacity)
        XCTAssertEqual(standard.longCapacity, plain.longCapacity)
    }
}
