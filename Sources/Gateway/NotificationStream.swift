import EventLog
import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle

/// `GET /v1/me/notifications/stream`: Server-Sent Events fed from the notifications read model.
///
/// Each entry is `id: <feed position>`, `event: notification`, `data: <JSON>`. A client that
/// reconnects with `Last-Event-ID` gets everything after that position; a new client gets
/// what arrives from now on. A comment line every heartbeat interval keeps proxies from
/// closing an idle stream. The stream ends when the client leaves, the server shuts down, or
/// after `streamMaxDuration` (the client reconnects with `Last-Event-ID` and loses nothing).
struct NotificationStream: Sendable {
    let services: GatewayServices
    /// How often the read model is polled while nothing arrives (also woken by the log's NOTIFY).
    var pollInterval: Duration = .milliseconds(250)

    @Sendable func stream(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request)
        let start: LogPosition
        if let lastID = request.headers[.lastEventID] {
            guard let position = LogPosition(lastID.trimmingCharacters(in: .whitespaces)) else {
                throw APIError.validation("Last-Event-ID", "Last-Event-ID must be an id this stream sent")
            }
            start = position
        } else {
            start = try await latestPosition(of: user)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        headers[.xAccelBuffering] = "no"
        let services = self.services, poll = pollInterval
        let heartbeat = services.configuration.heartbeatInterval
        let closeAt = ContinuousClock.now + services.configuration.streamMaxDuration
        let logger = context.logger
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            var position = start
            var lastWrite = ContinuousClock.now
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            while !Task.isCancelled && !Task.isShuttingDownGracefully && ContinuousClock.now < closeAt {
                let generation = services.log.signal.generation
                let entries: [NotificationJSON]
                do {
                    entries = try await services.readModels.notifications(of: user, after: position, limit: 100)
                } catch {
                    // The database went away: end the stream; the client resumes with Last-Event-ID.
                    logger.warning("notification stream stopped", metadata: ["error": "\(error)"])
                    break
                }
                for entry in entries {
                    let json = String(decoding: try ResponseEncoder().encode(entry), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "id: \(entry.position)\nevent: notification\ndata: \(json)\n\n"))
                    position = entry.position
                    lastWrite = .now
                }
                if entries.count == 100 { continue }
                if ContinuousClock.now - lastWrite >= heartbeat {
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                    lastWrite = .now
                }
                await services.log.signal.wait(since: generation, timeout: poll)
            }
            try await writer.finish(nil)
        })
    }

    /// Where a new client starts: after the caller's newest inbox entry.
    func latestPosition(of user: UUID) async throws -> LogPosition {
        try await services.gate.withConnection(services.pool) { connection in
            guard let row = try connection.execute("""
                SELECT log_transaction_id, log_position FROM notifications WHERE user_id = $1
                ORDER BY log_transaction_id DESC, log_position DESC LIMIT 1
                """, [user]).first else { return .start }
            return LogPosition(transactionID: try row.uint64(0), position: try row.int64(1))
        }
    }
}
