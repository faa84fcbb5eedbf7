import Domain
import EventLog
import Foundation
import Logging
import Postgres
import UUIDText

/// Writes `walk_expired` for pending walks past their deadline.
///
/// Safe with several server processes: each expiry's command id is derived from the walk id, so
/// two processes expiring the same walk append it once (the second is a replay or a no-op).
/// A response after the deadline is refused by the domain whatever this job has done.
public struct WalkExpiryJob: Sendable {
    public let handler: CommandHandler
    public let interval: Duration
    private let logger: Logger

    public init(handler: CommandHandler, interval: Duration = .seconds(1), logger: Logger = Logger(label: "sniffmeet.walk-expiry")) {
        self.handler = handler
        self.interval = interval
        self.logger = logger
    }

    /// Runs until cancelled.
    public func run() async {
        while !Task.isCancelled {
            do {
                _ = try await expireDue()
            } catch is CancellationError {
                return
            } catch {
                logger.warning("walk expiry round failed", metadata: ["error": "\(PostgresError.logSummary(of: error))"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Expires what is due now (read from the walks read model); returns how many walks it expired.
    @discardableResult
    public func expireDue(limit: Int = 500) async throws -> Int {
        let now = handler.clock()
        let due = try await handler.log.pool.withConnection { connection -> [UUID] in
            _ = try DropTokens.purgeExpired(on: connection)
            return try connection.execute(
                "SELECT walk_id FROM walks WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2",
                [now, limit]
            ).rows.map { try $0.uuid(0) }
        }
        var expired = 0
        for walkID in due {
            let outcome = try await handler.handle(
                .expireWalk(walkID: walkID),
                metadata: CommandMetadata(commandID: Self.commandID(expiring: walkID), actor: nil)
            )
            if !outcome.events.isEmpty && !outcome.replayed { expired += 1 }
        }
        return expired
    }

    /// The same id for every attempt to expire one walk.
    static func commandID(expiring walkID: UUID) -> UUID {
        EventLog.derivedUUID(Array("expire-walk:\(walkID.lowercasedString)".utf8))
    }
}
