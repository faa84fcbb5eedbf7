import Commands
import EventLog
import Foundation
import Logging
import Postgres
import Projections
import ServiceLifecycle

/// What runs beside the HTTP server in one process.
public struct BackgroundWork: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The projection runner (one owner per projector across processes, so always safe to run).
    public static let projections = BackgroundWork(rawValue: 1 << 0)
    /// The walk expiry job (idempotent per walk, so safe in several processes).
    public static let walkExpiry = BackgroundWork(rawValue: 1 << 1)
    /// The NOTIFY listener that wakes this process's readers on other processes' appends.
    public static let listener = BackgroundWork(rawValue: 1 << 2)
    /// Deletes stored idempotent answers past their 24 hours (safe in several processes).
    public static let idempotencyPurge = BackgroundWork(rawValue: 1 << 3)
    /// Push delivery from the outbox (rows are claimed, so safe in several processes).
    public static let push = BackgroundWork(rawValue: 1 << 4)
    public static let all: BackgroundWork = [.projections, .walkExpiry, .listener, .idempotencyPurge, .push]
}

/// Runs the projectors until graceful shutdown, then stops them (their batches commit or roll
/// back whole; each projector's advisory lock goes with its connection).
struct ProjectionRunnerService: Service {
    let runner: ProjectionRunner

    func run() async throws {
        runner.start()
        try? await gracefulShutdown()
        await runner.stop()
    }
}

/// Runs the walk expiry job until graceful shutdown.
struct WalkExpiryService: Service {
    let job: WalkExpiryJob

    func run() async throws {
        try await cancelWhenGracefulShutdown { await job.run() }
    }
}

/// Keeps this process's one LISTEN connection open until graceful shutdown, handing each
/// channel's notifications to its handler (`NotificationListener`): appends of other processes,
/// signed-out sessions (`SessionStore.revocations`), erased data keys (`DataKeys.erasures`),
/// chat read markers and typing (`ChatController.signals`).
///
/// Its checks are recorded in `confirmation`: the session cache trusts entries beyond a second
/// only while they are recent.
struct ListenerService: Service {
    let connectionString: String
    let handlers: [String: NotificationListener.Handler]
    let confirmation: ListenerConfirmation
    let logger: Logger

    func run() async throws {
        let listener = NotificationListener(
            connectionString: connectionString,
            handlers: handlers,
            confirmation: confirmation,
            logger: logger
        )
        listener.start()
        try? await gracefulShutdown()
        listener.stop()
    }
}

/// Deletes expired idempotent answers and transfer codes every `interval` until graceful
/// shutdown. Expired rows are already ignored (or refused); this only keeps the tables (and the
/// secrets sealed in them) small.
struct IdempotencyPurgeService: Service {
    let store: IdempotencyStore
    let sessions: SessionStore
    var interval: Duration = .seconds(600)
    let logger: Logger

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let purged = try await store.purge()
                    if purged > 0 { logger.info("purged expired idempotent answers", metadata: ["rows": "\(purged)"]) }
                    try await sessions.purgeExpiredTransferCodes()
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("idempotency purge failed", metadata: ["error": "\(ErrorMiddleware.logSummary(error))"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
