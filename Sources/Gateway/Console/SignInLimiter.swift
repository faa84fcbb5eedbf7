import Foundation
import Synchronization

/// Budgets of failed sign-ins per operator name and per address (a `TokenBucket` each): a
/// guessed password costs a token from both, and an empty bucket refuses further tries, right
/// or wrong, until it refills. Per process, like the other rate limits. Unlike `RateLimiter`,
/// a try is only checked; what it spends is decided by its outcome.
final class SignInLimiter: Sendable {
    enum Key: Hashable {
        case name(String)
        case address(String)
    }

    let budget: RateLimiter.Budget
    private let buckets = Mutex<[Key: TokenBucket]>([:])

    init(burst: Double, refillPerSecond: Double) {
        self.budget = RateLimiter.Budget(burst: burst, perSecond: refillPerSecond)
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
                buckets[key] = TokenBucket(tokens: max(0, level(buckets[key], now: now) - 1), updated: now)
            }
        }
    }

    private func level(_ bucket: TokenBucket?, now: ContinuousClock.Instant) -> Double {
        bucket?.level(at: now, budget) ?? budget.burst
    }
}
