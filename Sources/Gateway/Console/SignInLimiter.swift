import Foundation
import Synchronization

/// Budgets of failed sign-ins per operator name and per address (a token bucket each): a
/// guessed password costs a token from both, and an empty bucket refuses further tries, right
/// or wrong, until it refills. Per process, like the other rate limits.
final class SignInLimiter: Sendable {
    enum Key: Hashable {
        case name(String)
        case address(String)
    }

    struct Bucket {
        var tokens: Double
        var at: ContinuousClock.Instant
    }

    let burst: Double
    let refill: Double
    private let buckets = Mutex<[Key: Bucket]>([:])

    init(burst: Double, refillPerSecond: Double) {
        self.burst = burst
        self.refill = refillPerSecond
    }

    /// True when both the name and the address may still try.
    func allows(name: String, address: String, now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLock { buckets in
            [Key.name(name), .address(address)].allSatisfy { level(buckets[$0], now: now) >= 1 }
        }
    }

    /// A failed sign-in spends one from the name's and the address's budgets.
    func failed(name: String, address: String, now: ContinuousClock.Instant = .now) {
        buckets.withLock { buckets in
            if buckets.count > 100_000 { buckets.removeAll() }  // bounded memory under a flood
            for key in [Key.name(name), .address(address)] {
                buckets[key] = Bucket(tokens: max(0, level(buckets[key], now: now) - 1), at: now)
            }
        }
    }

    private func level(_ bucket: Bucket?, now: ContinuousClock.Instant) -> Double {
        guard let bucket else { return burst }
        let elapsed = now - bucket.at
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return min(burst, bucket.tokens + seconds * refill)
    }
}
