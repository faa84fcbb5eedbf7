import EventLog
import Foundation
import Logging
import Photos
import Postgres

/// What the routes and middleware share: the database, the stores, the limits. A container
/// only; what a request needs on its way is middleware (`AuthenticationMiddleware`,
/// `IdempotencyMiddleware`) and what it answers writes itself (`Answer`).
public struct GatewayServices: Sendable {
    public let configuration: GatewayConfiguration
    public let pool: ConnectionPool
    public let gate: DatabaseGate
    public let log: EventLog
    public let sessions: SessionStore
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
    /// Uploads' image work: worker threads, a bounded queue (`PUT /v1/me/photo`).
    public let photos: PhotoProcessor
    /// The `photos` table.
    public let photoStore: PhotoStore
    /// Reads uploads, with the photo size limit instead of the JSON one.
    let photoBody: BodyReader
    /// This build's migrations, read once: `/readyz` compares them with the database.
    let migrator: Result<Migrator, any Error>
    /// Each projector's lag over the last hour (the console's charts).
    public let lagSamples = LagSamples()
    /// The query routes' replicas (`DATABASE_READ_URL`), when configured.
    public var replicas: ReplicaReads?

    public init(
        configuration: GatewayConfiguration,
        pool: ConnectionPool,
        log: EventLog,
        metrics: GatewayMetrics = GatewayMetrics(),
        waiter: ProjectionProgress.Waiter? = nil,
        feedWaiter: ProjectionProgress.Waiter? = nil
    ) {
        self.configuration = configuration
        self.pool = pool
        self.log = log
        self.gate = DatabaseGate(limit: configuration.maxConcurrentDatabaseWaits)
        self.sessions = SessionStore(pool: pool, gate: gate, secret: configuration.secret, cachedSessions: configuration.cachedSessions)
        self.idempotency = IdempotencyStore(pool: pool, gate: gate, secret: configuration.secret)
        self.readModels = ReadModels(pool: pool, gate: gate)
        self.progress = ProjectionProgress(
            pool: pool,
            gate: gate,
            waiter: waiter,
            readYourWritesTimeout: configuration.readYourWritesTimeout
        )
        self.metrics = metrics
        self.limiter = RateLimiter(budgets: configuration.rateLimits)
        self.feed = NotificationFeed(
            readModels: readModels,
            limits: configuration.streamLimits,
            heartbeatInterval: configuration.heartbeatInterval,
            waiter: feedWaiter ?? waiter,
            logger: Logger(label: "sniffmeet.notification-feed")
        )
        self.authenticator = Authenticator(sessions: sessions, limiter: limiter)
        self.body = BodyReader(limit: configuration.maxBodyBytes)
        self.photos = PhotoProcessor(queueLimit: configuration.photoQueueLimit)
        self.photoStore = PhotoStore(pool: pool, gate: gate)
        self.photoBody = BodyReader(limit: configuration.maxPhotoBytes)
        self.migrator = Result { try Migrator.bundled() }
    }
}
