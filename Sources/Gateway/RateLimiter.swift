import Foundation
import Synchronization

/// Per-client request budgets as token buckets, kept in this process: per IP address before
/// sign-in (anonymous requests and failed sign-ins), per user after, and a smaller one for
/// sign-ups per IP. Past a budget the answer is `429 rate_limited` with `Retry-After`.
///
/// Several `serve` processes each apply the budgets on their own, so behind a load balancer
/// that spreads one client over N processes the client gets up to N times the budget.
public final class RateLimiter: Sendable {
    /// A bucket's size and refill rate.
    public struct Budget: Sendable, Equatable {
        /// Requests allowed at once.
        public var burst: Double
        /// Requests per second regained.
        public var perSecond: Double
        public init(burst: Double, perSecond: Double) {
            self.burst = burst
            self.perSecond = perSecond
        }
    }

    /// Every budget; `nil` is no limit.
    public struct Budgets: Sendable, Equatable {
        public var ip: Budget?
        public var signUp: Budget?
        public var user: Budget?
        /// Nickname checks (`GET /v1/nicknames/…`), per address, beside the anonymous budget.
        public var nicknames: Budget?
        /// Chat messages sent, per user, beside the user's budget.
        public var messages: Budget?

        public init(ip: Budget?, signUp: Budget?, user: Budget?, nicknames: Budget? = nil, messages: Budget? = nil) {
            self.ip = ip
            self.signUp = signUp
            self.user = user
            self.nicknames = nicknames
            self.messages = messages
        }

        /// The defaults (README): 60 anonymous requests per IP at once, one more per second; 20
        /// sign-ups per IP at once, one more every 10 s; 200 requests per user at once, 50 more
        /// per second; 30 nickname checks per IP at once, one more every 2 s (onboarding checks as
        /// the owner types). Generous for phones behind a carrier's shared address, tight for scripts.
        public static let standard = Budgets(
            ip: Budget(burst: 60, perSecond: 1),
            signUp: Budget(burst: 20, perSecond: 0.1),
            user: Budget(burst: 200, perSecond: 50),
            nicknames: Budget(burst: 30, perSecond: 0.5),
            messages: Budget(burst: 20, perSecond: 5)
        )
        public static let off = Budgets(ip: nil, signUp: nil, user: nil)

        /// `SNIFFMEET_RATE_LIMITS`: `off`, or overrides such as `ip=60:1,signup=20:0.1,user=200:50,nickname=30:0.5`
        /// (`name=burst:per-second`; unnamed budgets keep their defaults). Nil when malformed.
        public init?(parsing text: String) {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed == "off" {
                self = .off
                return
            }
            self = .standard
            for item in trimmed.split(separator: ",") {
                let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                let numbers = pair.count == 2 ? pair[1].split(separator: ":").compactMap { Double($0) } : []
                guard numbers.count == 2, numbers[0] >= 1, numbers[1] > 0, numbers.allSatisfy(\.isFinite) else { return nil }
                let budget = Budget(burst: numbers[0], perSecond: numbers[1])
                switch pair[0] {
                case "ip": ip = budget
                case "signup": signUp = budget
                case "user": user = budget
                case "nickname": nicknames = budget
                case "message": messages = budget
                default: return nil
                }
            }
        }
    }

    /// Whose budget a request spends.
    public enum Client: Hashable, Sendable {
        case ip(String)
        case signUp(String)
        case user(UUID)
        case nickname(String)
        /// A chat message sent by this user.
        case messages(UUID)
    }

    public let budgets: Budgets
    /// Buckets kept at most; past that, full (idle) buckets are forgotten first.
    let capacity: Int
    private let buckets = Mutex<[Client: TokenBucket]>([:])

    public init(budgets: Budgets, capacity: Int = 100_000) {
        self.budgets = budgets
        self.capacity = capacity
    }

    /// Buckets held now.
    public var bucketCount: Int { buckets.withLock { $0.count } }

    /// Spends one request of `client`'s budget, or throws `429 rate_limited`.
    public func spend(_ client: Client, now: ContinuousClock.Instant = .now) throws(APIError) {
        let budget: Budget?
        switch client {
        case .ip: budget = budgets.ip
        case .signUp: budget = budgets.signUp
        case .user: budget = budgets.user
        case .nickname: budget = budgets.nicknames
        case .messages: budget = budgets.messages
        }
        guard let budget else { return }
        let wait = buckets.withLock { buckets -> Double? in
            if buckets.count >= capacity, buckets[client] == nil { forgetIdle(&buckets, now: now) }
            var bucket = buckets[client] ?? TokenBucket(tokens: budget.burst, updated: now)
            bucket = TokenBucket(tokens: bucket.level(at: now, budget), updated: now)
            defer { buckets[client] = bucket }
            guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / budget.perSecond }
            bucket.tokens -= 1
            return nil
        }
        if let wait { throw APIError.rateLimited(retryAfter: Int(wait.rounded(.up))) }
    }

    /// Drops buckets that have refilled completely (they hold nothing a new bucket would not);
    /// if every bucket is busy, starts over rather than grow without bound.
    private func forgetIdle(_ buckets: inout [Client: TokenBucket], now: ContinuousClock.Instant) {
        let longestRefill =
            [budgets.ip, budgets.signUp, budgets.user, budgets.nicknames].compactMap { $0 }.map { $0.burst / $0.perSecond }.max() ?? 0
        buckets = buckets.filter { Self.seconds(now - $0.value.updated) < longestRefill }
        if buckets.count >= capacity { buckets.removeAll(keepingCapacity: true) }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A token bucket: `tokens` as of `updated`, refilled at a budget's rate up to its burst.
/// `RateLimiter` keeps one per client; the console's sign-in limit one per name and address.
struct TokenBucket {
    var tokens: Double
    var updated: ContinuousClock.Instant

    /// The tokens held at `now`.
    func level(at now: ContinuousClock.Instant, _ budget: RateLimiter.Budget) -> Double {
        min(budget.burst, tokens + RateLimiter.seconds(now - updated) * budget.perSecond)
    }
}
