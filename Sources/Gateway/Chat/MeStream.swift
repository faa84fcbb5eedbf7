import EventLog
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Postgres
import Projections
import ServiceLifecycle
import Synchronization
import UUIDText

/// `GET /v1/me/stream[?viewing=<user_id>]`: the app's one live connection, served by the
/// process's `NotificationFeed` like `/v1/me/notifications/stream` and under the same caps.
///
/// `event: notification` and `event: message` carry `id: <feed position>`; a client that
/// reconnects with `Last-Event-ID` gets every one of them after it, once. `event: read` and
/// `event: typing` are live only. `viewing` names the conversation the app shows: while the
/// stream is open, this device gets no push for that conversation's messages.
struct MeStream: Sendable {
    let services: GatewayServices
    let feed: NotificationFeed

    @Sendable func stream(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try context.user
        var viewing: UUID?
        if let text = request.uri.queryParameters["viewing"], !text.isEmpty {
            guard let id = UUID(text: String(text)) else { throw APIError.validation("viewing", "viewing must be a user id") }
            viewing = id
        }
        let start: LogPosition
        if let lastID = request.headers[.lastEventID] {
            guard let position = LogPosition(lastID.trimmingCharacters(in: .whitespaces)) else {
                throw APIError.validation("Last-Event-ID", "Last-Event-ID must be an id this stream sent")
            }
            start = position
        } else {
            // Both newest positions in one round trip and one transaction.
            let inboxQuery = NotificationStream.latestPositionQuery(of: user)
            let chatQuery = ChatsQueries.latestChange(of: user)
            start = try await services.gate.withConnection(services.pool) { connection in
                let results = try connection.pipeline([inboxQuery.statement, chatQuery.statement])
                return max(try inboxQuery.read(results[0]), try chatQuery.read(results[1]))
            }
        }
        let subscription = try feed.subscribe(
            user: user,
            after: start,
            closeAt: ContinuousClock.now + services.configuration.streamMaxDuration,
            me: true,
            viewing: viewing
        )
        context.channel?.closeFuture.whenComplete { _ in subscription.end() }
        // While it is open, this device gets no push for the conversation it shows.
        let session = try context.identity.map(\.session) ?? { throw APIError.unauthorized }()
        let pool = services.pool
        let viewed = viewing
        if let viewing {
            let until = Date().addingTimeInterval(Double(services.configuration.streamMaxDuration.components.seconds) + 1)
            try await services.gate.withConnection(pool) { connection in
                try connection.execute(
                    """
                    INSERT INTO chat_viewing (session_id, mate_id, until) VALUES ($1, $2, $3)
                    ON CONFLICT (session_id, mate_id) DO UPDATE SET until = EXCLUDED.until
                    """,
                    [session, viewing, until]
                )
                return ()
            }
        }
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
                try await withGracefulShutdownHandler {
                    for await delivery in deliveries {
                        try await writer.write(ByteBuffer(string: try Self.text(of: delivery)))
                    }
                } onGracefulShutdown: {
                    subscription.end()
                }
                if let viewed {
                    _ = try? await pool.withConnection { connection -> Void in
                        try connection.execute("DELETE FROM chat_viewing WHERE session_id = $1 AND mate_id = $2", [session, viewed])
                    }
                }
                try await writer.finish(nil)
            }
        )
    }

    /// One delivery as SSE text.
    static func text(of delivery: NotificationFeed.Delivery) throws -> String {
        switch delivery {
        case .heartbeat:
            return ": heartbeat\n\n"
        case .entries(let entries):
            return try text(of: .events(entries.map(MeStreamEvent.notification)))
        case .events(let events):
            var text = ""
            for event in events {
                let json: [UInt8]
                let name: String
                switch event {
                case .notification(let entry): (name, json) = ("notification", try ResponseEncoder().bytes(entry))
                case .message(let message, _): (name, json) = ("message", try ResponseEncoder().bytes(message))
                case .read(let user, let upTo):
                    (name, json) = ("read", try ResponseEncoder().bytes(ChatPresenceJSON(user: user, upTo: upTo)))
                case .typing(let user): (name, json) = ("typing", try ResponseEncoder().bytes(ChatPresenceJSON(user: user, upTo: nil)))
                }
                if let position = event.position { text += "id: \(position)\n" }
                text += "event: \(name)\ndata: \(String(decoding: json, as: UTF8.self))\n\n"
            }
            return text
        }
    }
}

/// Hands `ChatController.signals` (read markers, typing) from any process to this process's
/// live streams, through the process's one listening connection (`ListenerService`).
enum ChatSignals {
    static func handler(feed: NotificationFeed) -> NotificationListener.Handler {
        { payloads in
            for payload in payloads {
                if let signal = ChatSignal(payload: payload) { feed.signal(signal) }
            }
        }
    }
}
