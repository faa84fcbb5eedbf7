import Commands
import EventLog
import Foundation
import Hummingbird
import Logging
import PersonalData
import Postgres
import Projections
import Push
import ServiceLifecycle

/// The router with every route of API.md and the middleware chain:
/// request id + log → metrics → JSON errors → rate limits → timeout → route.
///
/// Routes sit in groups by what must happen before them: public ones (operations, sign-up,
/// nickname checks) none or a budget of their own; signed-in ones `AuthenticationMiddleware`;
/// the operators' `AdminMiddleware`; commands also `IdempotencyMiddleware`.
public func buildRouter(_ services: GatewayServices, handler: CommandHandler) -> Router<GatewayRequestContext> {
    let configuration = services.configuration
    let runner = CommandRunner(handler: handler, gate: services.gate, log: services.log, metrics: services.metrics)
    let router = Router(context: GatewayRequestContext.self)
    let allowedMethods = AllowedMethods()
    router.add(middleware: RequestLogMiddleware())
    router.add(middleware: MetricsMiddleware(metrics: services.metrics))
    router.add(
        middleware: ErrorMiddleware(
            allowedMethods: allowedMethods,
            maxBodyBytes: configuration.maxBodyBytes,
            translate: { _ in nil }
        )
    )
    router.add(middleware: RateLimitMiddleware(limiter: services.limiter, trustForwardedFor: configuration.trustForwardedFor))
    router.add(
        middleware: TimeoutMiddleware(
            timeout: configuration.requestTimeout,
            exempt: ["/v1/me/notifications/stream", "/v1/me/stream"]
        )
    )
    if let replicas = services.replicas {
        router.add(
            middleware: ReplicaRoutingMiddleware(replicas: replicas, primary: services.pool, exempt: ["/v1/me/notifications/stream"])
        )
    }
    let signUp = router.group()
        .add(middleware: SignUpBudgetMiddleware(limiter: services.limiter, trustForwardedFor: configuration.trustForwardedFor))
        .add(
            middleware: IdempotencyMiddleware(
                store: services.idempotency,
                body: services.body,
                handsOutToken: true,
                trustForwardedFor: configuration.trustForwardedFor
            )
        )
    let signedIn = router.group()
        .add(
            middleware: AuthenticationMiddleware(authenticator: services.authenticator, trustForwardedFor: configuration.trustForwardedFor)
        )
    let commands = signedIn.group().add(middleware: IdempotencyMiddleware(store: services.idempotency, body: services.body))
    let nicknameChecks = router.group()
        .add(
            middleware: SignUpBudgetMiddleware(
                limiter: services.limiter,
                trustForwardedFor: configuration.trustForwardedFor,
                nicknames: true
            )
        )
    let admin = router.group()
        .add(
            middleware: AdminMiddleware(
                adminToken: configuration.adminToken,
                limiter: services.limiter,
                trustForwardedFor: configuration.trustForwardedFor,
                tokenOwner: { [gate = services.gate, pool = services.pool] token in
                    try await gate.withConnection(pool) { try OperatorStore.tokenOwner(token, on: $0) }
                }
            )
        )
    let adminCommands = admin.group().add(middleware: IdempotencyMiddleware(store: services.idempotency, body: services.body))

    OperationsController(services: services).addRoutes(to: router, admin: admin)
    let users = UsersController(services: services, runner: runner)
    users.addRoutes(signUp: signUp, queries: signedIn, commands: commands)
    users.addNicknameRoute(to: nicknameChecks)
    SessionsController(services: services, runner: runner).addRoutes(signIn: signUp, queries: signedIn, commands: commands)
    MatesController(services: services, runner: runner).addRoutes(queries: signedIn, commands: commands)
    WalksController(services: services, runner: runner).addRoutes(queries: signedIn, commands: commands)
    NotificationsController(services: services, runner: runner).addRoutes(queries: signedIn, commands: commands)
    SafetyController(services: services, runner: runner).addRoutes(queries: signedIn, commands: commands)
    let adminController = AdminController(services: services, runner: runner)
    adminController.addRoutes(admin: admin, commands: adminCommands)
    ConsoleController(services: services, admin: adminController).addRoutes(to: router)
    PhotosController(services: services, runner: runner).addRoutes(fetches: router, upload: signedIn, commands: commands)
    // Walk log uploads are idempotent like every POST, with their own 2 MiB body limit.
    let walkLogUploads = signedIn.group()
        .add(middleware: IdempotencyMiddleware(store: services.idempotency, body: BodyReader(limit: WalkLogController.maxUploadBytes)))
    WalkLogController(services: services, runner: runner).addRoutes(uploads: walkLogUploads, queries: signedIn, commands: commands)
    ChatController(services: services, runner: runner).addRoutes(queries: signedIn, commands: commands)
    ChatPhotosController(services: services, runner: runner).addRoutes(signedIn: signedIn)
    allowedMethods.load(from: router)
    return router
}

/// The gateway application on `configuration`'s database, with `background` work (projection
/// runner, walk expiry job, NOTIFY listener) and `services` running beside the HTTP server under
/// one ServiceGroup: SIGTERM/SIGINT stop accepting, finish in-flight requests, then stop those.
public func buildApplication(
    _ configuration: GatewayConfiguration,
    background: BackgroundWork = .all,
    services extra: [any Service] = [],
    logger: Logger = Logger(label: "sniffmeet.gateway")
) throws -> some ApplicationProtocol {
    let statementTimeout = configuration.statementTimeout.components
    let timeoutMilliseconds = Int(statementTimeout.seconds * 1000 + statementTimeout.attoseconds / 1_000_000_000_000_000)
    let pool = ConnectionPool(
        connectionString: ConnectionOptions.forServing(configuration.databaseURL, statementTimeoutMilliseconds: timeoutMilliseconds),
        maxConnections: configuration.maxConnections,
        acquireTimeout: .seconds(2),
        logger: logger
    )
    let log = EventLog(pool: pool)
    let sealer = EventSealer(secret: configuration.secret)
    let handler = CommandHandler(
        log: log,
        sealer: sealer,
        walkTTL: configuration.walkTTL,
        clock: configuration.clock,
        cache: StreamCache(states: configuration.streamCacheStates)
    )
    var backgroundServices: [any Service] = []
    var waiter: ProjectionProgress.Waiter?
    var feedWaiter: ProjectionProgress.Waiter?
    // Every channel this process follows shares one LISTEN connection (`ListenerService`).
    var listening: [String: NotificationListener.Handler] = [:]
    if background.contains(.listener) {
        // Appends of other processes wake this process's readers.
        let signal = log.signal
        listening[EventLog.channel] = { _ in signal.notify() }
    }
    if background.contains(.projections) {
        let runner = ProjectionRunner(
            log: log,
            sealer: sealer,
            connectionString: ConnectionOptions.forServing(configuration.databaseURL),
            logger: logger
        )
        backgroundServices.append(ProjectionRunnerService(runner: runner))
        // In-process projectors wake waiting queries the moment they commit (no polling).
        waiter = { position, names, timeout in try await runner.waitUntil(position: position, projectors: names, timeout: timeout) }
        // The live feed waits all the time; when another process owns the notifications
        // projector, reading its checkpoint ten times a second is soon enough for a stream.
        feedWaiter = { position, names, timeout in
            try await runner.waitUntil(position: position, projectors: names, timeout: timeout, poll: .milliseconds(100))
        }
    }
    if background.contains(.walkExpiry) {
        backgroundServices.append(WalkExpiryService(job: WalkExpiryJob(handler: handler, logger: logger)))
    }
    var services = GatewayServices(configuration: configuration, pool: pool, log: log, waiter: waiter, feedWaiter: feedWaiter)
    if let readURL = configuration.databaseReadURL {
        let replicas = ReplicaReads(
            pool: ConnectionPool(
                connectionString: ConnectionOptions.forServing(readURL, statementTimeoutMilliseconds: timeoutMilliseconds),
                maxConnections: configuration.maxConnections,
                acquireTimeout: .seconds(2),
                logger: logger
            ),
            maxLag: configuration.maxReplicaLag,
            logger: logger
        )
        services.replicas = replicas
        backgroundServices.append(ReplicaMonitorService(replicas: replicas))
    }
    // Signed-out sessions stop working here the moment another process announces them (the
    // cache is emptied: revocations are rare), and an erased data key leaves memory too.
    let sessionCache = services.sessions.cache
    listening[SessionStore.revocations] = { _ in sessionCache.forgetAll() }
    listening[DataKeys.erasures] = { _ in
        sealer.forgetCachedKeys()
        sealer.forgetRememberedEvents()
    }
    // The console's lag charts: every projector's lag, sampled every few seconds.
    if background.contains(.projections) {
        backgroundServices.append(LagSamplingService(progress: services.progress, samples: services.lagSamples))
    }
    // Live inbox streams are served by one feed per process, ended with the server.
    backgroundServices.append(NotificationFeedService(feed: services.feed))
    // Chat read markers and typing reach this process's live streams.
    listening[ChatController.signals] = ChatSignals.handler(feed: services.feed)
    backgroundServices.append(
        ListenerService(
            connectionString: configuration.databaseURL,
            handlers: listening,
            confirmation: sessionCache.revocationsConfirmed,
            logger: logger
        )
    )
    if background.contains(.idempotencyPurge) {
        backgroundServices.append(IdempotencyPurgeService(store: services.idempotency, sessions: services.sessions, logger: logger))
    }
    // Pushes go out from every process (rows are claimed, never sent twice by two of them);
    // without APNs settings the service only purges old rows.
    if background.contains(.push) {
        backgroundServices.append(
            try PushDelivery(
                settings: configuration.apns,
                pool: pool,
                seal: DeviceTokenSeal(secret: configuration.secret),
                metrics: services.metrics.registry,
                logger: logger
            )
        )
    }
    let router = buildRouter(services, handler: handler)
    return Application(
        router: router,
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: [HeadTooLargeHandler()],
                idleTimeout: .nanoseconds(
                    Int64(configuration.idleTimeout.components.seconds) * 1_000_000_000
                        + configuration.idleTimeout.components.attoseconds / 1_000_000_000
                ),
                httpDecoderConfiguration: .init(
                    maxHeaderFieldSize: configuration.maxHeaderBytes,
                    maxHeaderListSize: configuration.maxHeaderBytes,
                    maxHeaderFieldCount: 100
                )
            )
        ),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "sniffmeet"),
        // Stopped in reverse order: the HTTP server first, then extras, background work, the pool last.
        services: [PoolCloser(pool: pool)] + backgroundServices + extra,
        logger: logger
    )
}

/// Closes the pool when the application stops.
struct PoolCloser: Service {
    let pool: ConnectionPool
    func run() async throws {
        try? await gracefulShutdown()
        await pool.close()
    }
}
