import EventLog
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Postgres

/// What the route handlers share: the database, the stores, and the helpers every route uses
/// (authentication, read-your-writes, JSON answers).
public struct GatewayServices: Sendable {
    public let configuration: GatewayConfiguration
    public let pool: ConnectionPool
    public let gate: DatabaseGate
    public let log: EventLog
    public let tokens: TokenStore
    public let idempotency: IdempotencyStore
    public let readModels: ReadModels
    public let progress: ProjectionProgress
    public let metrics: GatewayMetrics
    /// Request budgets per IP and per user.
    public let limiter: RateLimiter
    /// The one reader of this process's live inbox streams.
    public let feed: NotificationFeed
    let authenticator: Authenticator
    let body: BodyReader
    /// This build's migrations, read once: `/readyz` compares them with the database.
    let migrator: Result<Migrator, any Error>

    public init(configuration: GatewayConfiguration, pool: ConnectionPool, log: EventLog, metrics: GatewayMetrics = GatewayMetrics(),
                waiter: ProjectionProgress.Waiter? = nil, feedWaiter: ProjectionProgress.Waiter? = nil) {
        self.configuration = configuration
        self.pool = pool
        self.log = log
        self.gate = DatabaseGate(limit: configuration.maxConcurrentDatabaseWaits)
        self.tokens = TokenStore(pool: pool, gate: gate)
        self.idempotency = IdempotencyStore(pool: pool, gate: gate, secret: configuration.secret)
        self.readModels = ReadModels(pool: pool, gate: gate)
        self.progress = ProjectionProgress(pool: pool, gate: gate, waiter: waiter)
        self.metrics = metrics
        self.limiter = RateLimiter(budgets: configuration.rateLimits)
        self.feed = NotificationFeed(readModels: readModels, limits: configuration.streamLimits,
                                     heartbeatInterval: configuration.heartbeatInterval,
                                     waiter: feedWaiter ?? waiter, logger: Logger(label: "sniffmeet.notification-feed"))
        self.authenticator = Authenticator(tokens: tokens, limiter: limiter)
        self.body = BodyReader(limit: configuration.maxBodyBytes)
        self.migrator = Result { try Migrator.bundled() }
    }

    /// The caller, from the bearer token; `401 unauthorized` otherwise. The request spends the
    /// caller's budget, or, when the token is not good, its address's.
    func user(_ request: Request, _ context: GatewayRequestContext) async throws -> UUID {
        try await authenticator.requireUser(request, address: clientAddress(request, context))
    }

    /// Who sent the request, for budgets: the TCP peer, or with `trustForwardedFor` the last
    /// hop of `X-Forwarded-For` (the one our proxy added; earlier hops are the client's word).
    func clientAddress(_ request: Request, _ context: GatewayRequestContext) -> String {
        if configuration.trustForwardedFor, let forwarded = request.headers[.xForwardedFor],
           let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty {
            return String(last.prefix(64))
        }
        return context.remoteAddress?.ipAddress ?? "local"
    }

    /// Honors `Min-Log-Position`: returns once the read models this query reads include it,
    /// or throws `503 not_caught_up` after the configured wait (3 s).
    func awaitMinLogPosition(_ request: Request, projectors: [String]) async throws {
        guard let text = request.headers[.minLogPosition] else { return }
        guard let position = LogPosition(text.trimmingCharacters(in: .whitespaces)) else {
            throw APIError.validation("Min-Log-Position", "Min-Log-Position must be a value of a Log-Position header")
        }
        try await progress.waitUntil(position, projectors: projectors, timeout: configuration.readYourWritesTimeout)
    }

    /// A JSON answer.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, logPosition: String? = nil) throws -> Response {
        jsonData(try ResponseEncoder().encode(value), status: status, logPosition: logPosition)
    }

    static func json(_ value: some JSONObjectWritable, status: HTTPResponse.Status = .ok, logPosition: String? = nil) throws -> Response {
        jsonData(try ResponseEncoder().bytes(value), status: status, logPosition: logPosition)
    }

    /// An answer whose JSON text is already made (stored idempotent answers, encoded objects).
    static func jsonData(_ bytes: some Sequence<UInt8>, status: HTTPResponse.Status, logPosition: String?) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        if let logPosition { headers[.logPosition] = logPosition }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `204 No Content`, with the command's `Log-Position`.
    static func noContent(logPosition: String?) -> Response {
        var headers = HTTPFields()
        if let logPosition { headers[.logPosition] = logPosition }
        return Response(status: .noContent, headers: headers)
    }

    /// A path parameter that must be a UUID; anything else cannot name a thing, so `404`.
    static func uuidParameter(_ context: GatewayRequestContext, _ name: String) throws -> UUID {
        guard let text = context.parameters.get(name), let id = UUID(uuidString: text) else { throw APIError.notFound }
        return id
    }

    /// An optional enumerated query parameter.
    static func queryValue(_ request: Request, _ name: String, allowed: [String]) throws -> String? {
        guard let value = request.uri.queryParameters[Substring(name)].map(String.init), !value.isEmpty else { return nil }
        guard allowed.contains(value) else {
            throw APIError.validation(name, "\(name) must be one of \(allowed.joined(separator: ", "))")
        }
        return value
    }
}
