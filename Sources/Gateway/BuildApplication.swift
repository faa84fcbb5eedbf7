import Commands
import EventLog
import Foundation
import Hummingbird
import Logging
import Postgres
import ServiceLifecycle

/// The router with every route of API.md and the middleware chain:
/// request id + log → metrics → JSON errors → timeout → route.
public func buildRouter(_ services: GatewayServices, handler: CommandHandler) -> Router<GatewayRequestContext> {
    let runner = CommandRunner(services: services, handler: handler)
    let router = Router(context: GatewayRequestContext.self)
    router.add(middleware: RequestLogMiddleware())
    router.add(middleware: MetricsMiddleware(metrics: services.metrics))
    router.add(middleware: ErrorMiddleware(routes: services.routes, maxBodyBytes: services.configuration.maxBodyBytes,
                                           translate: { _ in nil }))
    router.add(middleware: TimeoutMiddleware(timeout: services.configuration.requestTimeout,
                                             exempt: ["/v1/me/notifications/stream"]))
    OperationsController(services: services).addRoutes(to: router)
    UsersController(services: services, runner: runner).addRoutes(to: router)
    MatesController(services: services, runner: runner).addRoutes(to: router)
    WalksController(services: services, runner: runner).addRoutes(to: router)
    NotificationsController(services: services).addRoutes(to: router)
    return router
}

/// The gateway application on `configuration`'s database; `services` run beside the HTTP
/// server under one ServiceGroup (projection runner, walk expiry job), so SIGTERM/SIGINT stop
/// accepting, finish in-flight requests, then stop those too.
public func buildApplication(_ configuration: GatewayConfiguration, services extra: [any Service] = [],
                             logger: Logger = Logger(label: "sniffmeet.gateway")) throws -> some ApplicationProtocol {
    let pool = ConnectionPool(connectionString: ConnectionOptions.withStatementTimeout(configuration.databaseURL,
                                                                                      milliseconds: 5000),
                              maxConnections: configuration.maxConnections, acquireTimeout: .seconds(2), logger: logger)
    let log = EventLog(pool: pool)
    let services = GatewayServices(configuration: configuration, pool: pool, log: log)
    let router = buildRouter(services, handler: CommandHandler(log: log, walkTTL: configuration.walkTTL))
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "sniffmeet"),
        services: [PoolCloser(pool: pool)] + extra,  // stopped in reverse: extras first, the pool last
        logger: logger)
}

/// Closes the pool when the application stops.
struct PoolCloser: Service {
    let pool: ConnectionPool
    func run() async throws {
        try? await gracefulShutdown()
        await pool.close()
    }
}
