import EventLog
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Postgres
import ServiceLifecycle

/// `GET /v1/me/notifications/stream`: Server-Sent Events fed by the process's `NotificationFeed`.
///
/// Each entry is `id: <feed position>`, `event: notification`, `data: <JSON>`. A client that
/// reconnects with `Last-Event-ID` gets everything after that position; a new client gets
/// what arrives from now on. A comment line every heartbeat interval keeps proxies from
/// closing an idle stream. The stream ends when the client leaves, the server shuts down, or
/// after `streamMaxDuration` (the client reconnects with `Last-Event-ID` and loses nothing).
struct NotificationStream: Sendable {
    let services: GatewayServices
    let feed: NotificationFeed

    @Sendable func stream(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try context.user
        let start: LogPosition
        if let lastID = request.headers[.lastEventID] {
            guard let position = LogPosition(lastID.trimmingCharacters(in: .whitespaces)) else {
                throw APIError.validation("Last-Event-ID", "Last-Event-ID must be an id this stream sent")
            }
            start = position
        } else {
            start = try await latestPosition(of: user)
        }
        let subscription = try feed.subscribe(
            user: user,
            after: start,
            closeAt: ContinuousClock.now + services.configuration.streamMaxDuration
        )
        // A client that leaves frees its place when the connection is seen closing; Hummingbird
        // does not read a connection while it answers, so that is often only when the next
        // heartbeat's write fails (at most `heartbeatInterval` later).
        context.channel?.closeFuture.whenComplete { _ in subscription.end() }
        let deliveries = subscription.deliveries
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        headers[.xAccelBuffering] = "no"
        return Response(
            status: .ok,
            headers: headers,
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                // Shutdown ends the stream at once (the client resumes elsewhere with Last-Event-ID);
                // the server would otherwise wait for it before stopping the feed.
                try await withGracefulShutdownHandler {
                    try await relay(deliveries, to: &writer)
                } onGracefulShutdown: {
                    subscription.end()
                }
                try await writer.finish(nil)
            }
        )
    }

    /// Writes each delivery as SSE until the stream ends.
    private func relay(_ deliveries: AsyncStream<NotificationFeed.Delivery>, to writer: inout some ResponseBodyWriter) async throws {
        for await delivery in deliveries {
            switch delivery {
            case .heartbeat:
                try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
            case .events:
                continue  // only `me` streams get these
            case .entries(let entries):
                var text = ""
                for entry in entries {
                    let json = String(decoding: try ResponseEncoder().bytes(entry), as: UTF8.self)
                    text += "id: \(entry.position)\nevent: notification\ndata: \(json)\n\n"
                }
                try await writer.write(ByteBuffer(string: text))
            }
        }
    }

    /// Where a new client starts: after the caller's newest inbox entry, so that what commits
    /// from the moment of the request on reaches it.
    func latestPosition(of user: UUID) async throws -> LogPosition {
        try await services.gate.run(Self.latestPositionQuery(of: user), on: services.pool)
    }

    /// The feed position of `user`'s newest inbox entry (`.start` for none).
    static func latestPositionQuery(of user: UUID) -> Query<LogPosition> {
        Query(
            """
            SELECT log_transaction_id, log_position FROM notifications WHERE user_id = $1
            ORDER BY log_transaction_id DESC, log_position DESC LIMIT 1
            """,
            [user]
        ) { result in
            guard let row = result.first else { return .start }
            return LogPosition(transactionID: try row.uint64(0), position: try row.int64(1))
        }
    }
}
