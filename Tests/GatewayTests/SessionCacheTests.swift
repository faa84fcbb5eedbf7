@preconcurrency import Crypto
import Foundation
import XCTest

@testable import Gateway
@testable import Postgres

/// The session cache trusts an entry for `maxAge` after it was read, and beyond that only while
/// the revocations listener's latest check is younger than `maxAge`; a session read before the
/// cache was emptied is never remembered after it.
final class SessionCacheTests: XCTestCase {
    private let hash = SHA256.hash(data: Data("seven".utf8))
    private let caller = Caller(user: UUID(), session: UUID())

    func testAnEntryOutlivesMaxAgeOnlyWhileTheListenerConfirms() async throws {
        let cache = SessionCache(capacity: 100, maxAge: .milliseconds(150))
        cache.remember(hash, caller, readIn: cache.generation, lastSeenIn: .seconds(60))
        XCTAssertEqual(cache.caller(for: hash)?.caller, caller)
        // Past maxAge with a recent check: still trusted.
        try await Task.sleep(for: .milliseconds(200))
        cache.revocationsConfirmed.confirm(.now)
        XCTAssertEqual(cache.caller(for: hash)?.caller, caller)
        // The checks stop (a hung connection): once the latest is older than maxAge, gone.
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertNil(cache.caller(for: hash))
        // And it does not come back when checks resume: it was dropped.
        cache.revocationsConfirmed.confirm(.now)
        XCTAssertNil(cache.caller(for: hash))
    }

    func testWithoutAConfirmationAnEntryLastsMaxAge() async throws {
        let cache = SessionCache(capacity: 100, maxAge: .milliseconds(150))
        cache.remember(hash, caller, readIn: cache.generation, lastSeenIn: .seconds(60))
        XCTAssertEqual(cache.caller(for: hash)?.caller, caller)
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertNil(cache.caller(for: hash))
        // A withdrawn confirmation (the listener lost its connection) is no confirmation.
        cache.remember(hash, caller, readIn: cache.generation, lastSeenIn: .seconds(60))
        cache.revocationsConfirmed.confirm(.now)
        cache.revocationsConfirmed.withdraw()
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertNil(cache.caller(for: hash))
    }

    /// A revocation announced while its session was being read empties the cache before the
    /// read is remembered: the read must not come back as a cached session.
    func testASessionReadBeforeTheCacheWasEmptiedIsNotRemembered() {
        let cache = SessionCache(capacity: 100, maxAge: .seconds(60))
        let generation = cache.generation
        cache.forgetAll()
        cache.remember(hash, caller, readIn: generation, lastSeenIn: .seconds(60))
        XCTAssertNil(cache.caller(for: hash))
        let other = SHA256.hash(data: Data("eight".utf8))
        let before = cache.generation
        cache.forget(user: UUID())
        cache.remember(other, caller, readIn: before, lastSeenIn: .seconds(60))
        XCTAssertNil(cache.caller(for: other), "a local sign-out empties the cache of its user the same way")
        cache.remember(other, caller, readIn: cache.generation, lastSeenIn: .seconds(60))
        XCTAssertEqual(cache.caller(for: other)?.caller, caller)
    }

    /// A session served from the cache still has its `last_seen_at` moved every `lastSeenStep`
    /// (the first time when the database said it would be due), once per step.
    func testACachedSessionIsSeenOncePerStep() async throws {
        let cache = SessionCache(capacity: 100, maxAge: .seconds(60), lastSeenStep: .milliseconds(300))
        cache.remember(hash, caller, readIn: cache.generation, lastSeenIn: .milliseconds(100))
        XCTAssertEqual(cache.caller(for: hash)?.lastSeenDue, false)
        try await Task.sleep(for: .milliseconds(150))
        XCTAssertEqual(cache.caller(for: hash)?.lastSeenDue, true)
        XCTAssertEqual(cache.caller(for: hash)?.lastSeenDue, false, "once per step")
        try await Task.sleep(for: .milliseconds(350))
        XCTAssertEqual(cache.caller(for: hash)?.lastSeenDue, true)
    }
}
