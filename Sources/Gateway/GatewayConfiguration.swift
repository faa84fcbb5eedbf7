import Commands
@preconcurrency import Crypto
import Foundation
import PersonalData
import Push

/// Everything the gateway can be told from outside: flags of `sniffmeet serve` and the
/// environment. Defaults are those of API.md.
public struct GatewayConfiguration: Sendable {
    /// Address to bind.
    public var host: String
    /// Port to bind; 0 picks a free one (tests).
    public var port: Int
    /// libpq connection string or URI of the database.
    public var databaseURL: String
    /// How long a walk request is answerable (`SNIFFMEET_WALK_TTL_SECONDS`, default 60).
    public var walkTTL: TimeInterval
    /// Apple's push service (`SNIFFMEET_APNS_*`); nil sends no push.
    public var apns: APNsSettings?
    /// Bearer token of `/v1/admin/projections` (`SNIFFMEET_ADMIN_TOKEN`); `nil` disables that route (403).
    public var adminToken: String?
    /// The operator console (`SNIFFMEET_PUBLIC_URL`, `SNIFFMEET_CONSOLE_SECURE_COOKIES`).
    public var console = ConsoleSettings()
    /// Largest accepted request body.
    public var maxBodyBytes: Int
    /// How long a query waits for `Min-Log-Position` before `503 not_caught_up`.
    public var readYourWritesTimeout: Duration
    /// Longest time a request may take before `503 request_timeout` (not the SSE stream).
    public var requestTimeout: Duration
    /// Database connections in the pool. The default, twice the CPU cores (at least 4), is the
    /// usual sizing for a database on the same machine: more connections than that only make
    /// backends and request threads compete for the cores, which shows as tail latency
    /// (measured with `scripts/bench-http`: p99 at half load grew with 8 and 16 connections on
    /// two cores).
    public var maxConnections: Int

    /// `maxConnections`' default on this machine.
    public static var defaultMaxConnections: Int { max(4, 2 * ProcessInfo.processInfo.activeProcessorCount) }
    /// Requests allowed to wait for the database at once; past that the answer is a fast 503.
    public var maxConcurrentDatabaseWaits: Int
    /// How often the SSE stream sends a heartbeat comment.
    public var heartbeatInterval: Duration
    /// Longest a statement of the gateway may run (`statement_timeout`); past it the request is
    /// `503 unavailable` with `Retry-After`.
    public var statementTimeout: Duration
    /// Request budgets per client (`SNIFFMEET_RATE_LIMITS`).
    public var rateLimits: RateLimiter.Budgets
    /// Take the client's address from the last `X-Forwarded-For` hop instead of the TCP peer
    /// (`SNIFFMEET_TRUST_FORWARDED_FOR=1`): only behind a proxy that sets that header.
    public var trustForwardedFor: Bool
    /// Live inbox streams allowed per user and per process (`SNIFFMEET_STREAMS_PER_USER`,
    /// `SNIFFMEET_STREAMS_PER_PROCESS`).
    public var streamLimits: NotificationFeed.Limits
    /// How long a connection may sit idle between requests before it is closed
    /// (`SNIFFMEET_IDLE_TIMEOUT_SECONDS`, default 30).
    public var idleTimeout: Duration
    /// Largest request head (request line and all header fields) accepted; a larger one is
    /// `431` and the connection is closed (`SNIFFMEET_MAX_HEADER_BYTES`, default 16 KiB).
    public var maxHeaderBytes: Int
    /// The server's master secret (`ServerSecret`). The default, a random one, suits a single
    /// test process only: `sniffmeet serve` always loads the configured one.
    public var secret: SymmetricKey
    /// How long one SSE response stays open; the client then reconnects with `Last-Event-ID`.
    /// Bounding it keeps every request finite (proxies cut long streams anyway).
    public var streamMaxDuration: Duration
    /// Largest photo upload (`PUT /v1/me/photo`): API.md's 10 MiB.
    public var maxPhotoBytes = 10 * 1024 * 1024
    /// Uploads that may wait for a photo worker (one per core) before the answer is `503`
    /// (`SNIFFMEET_PHOTO_QUEUE`, default 8).
    public var photoQueueLimit = 8
    /// Streaming replicas for the query routes (`DATABASE_READ_URL`, any libpq connection
    /// string, e.g. several hosts with `target_session_attrs=prefer-standby`); nil: all on the primary.
    public var databaseReadURL: String?
    /// A replica lagging more than this is left out until it catches up
    /// (`SNIFFMEET_MAX_REPLICA_LAG_SECONDS`, default 5).
    public var maxReplicaLag: Duration = .seconds(5)
    /// Folded states of short streams the command side keeps (`StreamCache`;
    /// `SNIFFMEET_STREAM_CACHE_STATES`, default `StreamCache.defaultStates`).
    public var streamCacheStates = StreamCache.defaultStates
    /// Sessions kept in memory, so that a request need not read its session (`SessionCache`;
    /// `SNIFFMEET_CACHED_SESSIONS`, default `SessionStore.defaultCachedSessions`).
    public var cachedSessions = SessionStore.defaultCachedSessions
    /// The time commands decide by (a message's edit window, a drop token's expiry). Always the
    /// system clock when served; tests move it forward to reach time-bound refusals.
    public var clock: @Sendable () -> Date = { Date() }

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        databaseURL: String,
        walkTTL: TimeInterval = 60,
        adminToken: String? = nil,
        maxBodyBytes: Int = 16 * 1024,
        readYourWritesTimeout: Duration = .seconds(3),
        requestTimeout: Duration = .seconds(10),
        maxConnections: Int = GatewayConfiguration.defaultMaxConnections,
        maxConcurrentDatabaseWaits: Int = 256,
        heartbeatInterval: Duration = .seconds(15),
        streamMaxDuration: Duration = .seconds(600),
        secret: SymmetricKey = SymmetricKey(size: .bits256),
        rateLimits: RateLimiter.Budgets = .standard,
        trustForwardedFor: Bool = false,
        streamLimits: NotificationFeed.Limits = .init(),
        idleTimeout: Duration = .seconds(30),
        maxHeaderBytes: Int = 16 * 1024,
        statementTimeout: Duration = .seconds(5)
    ) {
        self.statementTimeout = statementTimeout
        self.secret = secret
        self.rateLimits = rateLimits
        self.trustForwardedFor = trustForwardedFor
        self.streamLimits = streamLimits
        self.idleTimeout = idleTimeout
        self.maxHeaderBytes = maxHeaderBytes
        self.host = host
        self.port = port
        self.databaseURL = databaseURL
        self.walkTTL = walkTTL
        self.adminToken = adminToken
        self.maxBodyBytes = maxBodyBytes
        self.readYourWritesTimeout = readYourWritesTimeout
        self.requestTimeout = requestTimeout
        self.maxConnections = maxConnections
        self.maxConcurrentDatabaseWaits = maxConcurrentDatabaseWaits
        self.heartbeatInterval = heartbeatInterval
        self.streamMaxDuration = streamMaxDuration
    }

    /// Reads `SNIFFMEET_WALK_TTL_SECONDS`, `SNIFFMEET_ADMIN_TOKEN`, `SNIFFMEET_DB_CONNECTIONS`,
    /// `SNIFFMEET_MAX_DB_WAITS`, `SNIFFMEET_REQUEST_TIMEOUT_SECONDS`, `SNIFFMEET_RATE_LIMITS`,
    /// `SNIFFMEET_TRUST_FORWARDED_FOR`, `SNIFFMEET_STREAMS_PER_USER`, `SNIFFMEET_STREAMS_PER_PROCESS`,
    /// `SNIFFMEET_IDLE_TIMEOUT_SECONDS`, `SNIFFMEET_MAX_HEADER_BYTES`, `SNIFFMEET_PHOTO_QUEUE`,
    /// `SNIFFMEET_STREAM_CACHE_STATES`, `SNIFFMEET_CACHED_SESSIONS` and the
    /// `SNIFFMEET_APNS_*` settings (`APNsSettings`) over the given values;
    /// throws on a malformed `SNIFFMEET_RATE_LIMITS` (a typo must not silently lift the limits).
    public func applyingEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Self {
        var copy = self
        if let ttl = environment["SNIFFMEET_WALK_TTL_SECONDS"].flatMap(Double.init), ttl > 0 { copy.walkTTL = ttl }
        if let token = environment["SNIFFMEET_ADMIN_TOKEN"], !token.isEmpty { copy.adminToken = token }
        copy.console = copy.console.applyingEnvironment(environment)
        if let count = environment["SNIFFMEET_DB_CONNECTIONS"].flatMap(Int.init), count > 0 { copy.maxConnections = count }
        if let waits = environment["SNIFFMEET_MAX_DB_WAITS"].flatMap(Int.init), waits > 0 { copy.maxConcurrentDatabaseWaits = waits }
        if let seconds = environment["SNIFFMEET_REQUEST_TIMEOUT_SECONDS"].flatMap(Double.init), seconds > 0, seconds <= 86400 {
            copy.requestTimeout = .milliseconds(Int64(seconds * 1000))
        }
        if let text = environment["SNIFFMEET_RATE_LIMITS"], !text.isEmpty {
            guard let budgets = RateLimiter.Budgets(parsing: text) else { throw ConfigurationError.rateLimits(text) }
            copy.rateLimits = budgets
        }
        if let flag = environment["SNIFFMEET_TRUST_FORWARDED_FOR"] { copy.trustForwardedFor = ["1", "true", "yes"].contains(flag) }
        if let count = environment["SNIFFMEET_STREAMS_PER_USER"].flatMap(Int.init), count > 0 { copy.streamLimits.perUser = count }
        if let count = environment["SNIFFMEET_STREAMS_PER_PROCESS"].flatMap(Int.init), count > 0 { copy.streamLimits.perProcess = count }
        if let seconds = environment["SNIFFMEET_IDLE_TIMEOUT_SECONDS"].flatMap(Double.init), seconds > 0, seconds <= 86400 {
            copy.idleTimeout = .milliseconds(Int64(seconds * 1000))
        }
        if let count = environment["SNIFFMEET_PHOTO_QUEUE"].flatMap(Int.init), count >= 0 { copy.photoQueueLimit = count }
        if let bytes = environment["SNIFFMEET_MAX_HEADER_BYTES"].flatMap(Int.init), bytes >= 1024 { copy.maxHeaderBytes = bytes }
        if let states = environment["SNIFFMEET_STREAM_CACHE_STATES"].flatMap(Int.init), states >= 2 { copy.streamCacheStates = states }
        if let sessions = environment["SNIFFMEET_CACHED_SESSIONS"].flatMap(Int.init), sessions >= 2 { copy.cachedSessions = sessions }
        if let apns = try APNsSettings.from(environment: environment) { copy.apns = apns }
        if let url = environment["DATABASE_READ_URL"], !url.isEmpty { copy.databaseReadURL = url }
        if let seconds = environment["SNIFFMEET_MAX_REPLICA_LAG_SECONDS"].flatMap(Double.init), seconds > 0, seconds <= 86400 {
            copy.maxReplicaLag = .milliseconds(Int64(seconds * 1000))
        }
        return copy
    }

    /// A setting that cannot be read.
    public enum ConfigurationError: Error, CustomStringConvertible {
        case rateLimits(String)
        public var description: String {
            switch self {
            case .rateLimits(let text):
                "SNIFFMEET_RATE_LIMITS=\(text) is not `off` or a list like ip=60:1,signup=20:0.1,user=200:50 (name=burst:per-second)"
            }
        }
    }
}
