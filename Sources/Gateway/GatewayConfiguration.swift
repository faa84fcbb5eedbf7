import Foundation

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
    /// Bearer token of `/v1/admin/projections` (`SNIFFMEET_ADMIN_TOKEN`); `nil` disables that route (403).
    public var adminToken: String?
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
    /// How long one SSE response stays open; the client then reconnects with `Last-Event-ID`.
    /// Bounding it keeps every request finite (proxies cut long streams anyway).
    public var streamMaxDuration: Duration

    public init(
        host: String = "127.0.0.1", port: Int = 8080, databaseURL: String,
        walkTTL: TimeInterval = 60, adminToken: String? = nil, maxBodyBytes: Int = 16 * 1024,
        readYourWritesTimeout: Duration = .seconds(3), requestTimeout: Duration = .seconds(10),
        maxConnections: Int = GatewayConfiguration.defaultMaxConnections, maxConcurrentDatabaseWaits: Int = 256,
        heartbeatInterval: Duration = .seconds(15), streamMaxDuration: Duration = .seconds(600)
    ) {
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
    /// `SNIFFMEET_MAX_DB_WAITS` and `SNIFFMEET_REQUEST_TIMEOUT_SECONDS` over the given values.
    public func applyingEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Self {
        var copy = self
        if let ttl = environment["SNIFFMEET_WALK_TTL_SECONDS"].flatMap(Double.init), ttl > 0 { copy.walkTTL = ttl }
        if let token = environment["SNIFFMEET_ADMIN_TOKEN"], !token.isEmpty { copy.adminToken = token }
        if let count = environment["SNIFFMEET_DB_CONNECTIONS"].flatMap(Int.init), count > 0 { copy.maxConnections = count }
        if let waits = environment["SNIFFMEET_MAX_DB_WAITS"].flatMap(Int.init), waits > 0 { copy.maxConcurrentDatabaseWaits = waits }
        if let seconds = environment["SNIFFMEET_REQUEST_TIMEOUT_SECONDS"].flatMap(Double.init), seconds > 0 {
            copy.requestTimeout = .milliseconds(Int64(seconds * 1000))
        }
        return copy
    }
}
