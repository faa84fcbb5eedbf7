import Commands
import Domain
import Foundation
import Hummingbird
import JSONText
import Postgres
import Projections

/// Chat between mates (API.md "Chat between mates"): send, edit, unsend, my conversations, a
/// conversation's messages, read markers and typing. A conversation is named by the other
/// mate's id; a stranger gets `409 not_mates` for writing and `404` for reading, never data.
struct ChatController {
    let services: GatewayServices
    let runner: CommandRunner

    /// The NOTIFY channel of read markers and typing, which stay out of the log: every process
    /// hands them to its live streams (`ChatSignals`).
    static let signals = "sniffmeet_chat_signals"

    /// `queries` are signed-in routes; `commands` are signed-in and idempotent.
    func addRoutes(queries: RouterGroup<GatewayRequestContext>, commands: RouterGroup<GatewayRequestContext>) {
        commands.post("/v1/chats/{user_id}/messages", use: send)
        queries.get("/v1/chats", use: conversations)
        queries.get("/v1/chats/{user_id}/messages", use: messages)
        commands.patch("/v1/chats/{user_id}/messages/{message_id}", use: edit)
        commands.delete("/v1/chats/{user_id}/messages/{message_id}", use: unsend)
        commands.put("/v1/chats/{user_id}/read", use: read)
        commands.post("/v1/chats/{user_id}/typing", use: typing)
        queries.get("/v1/me/stream", use: MeStream(services: services, feed: services.feed).stream)
    }

    /// `POST /v1/chats/{user_id}/messages`: to a current mate (`409 not_mates`, also after a
    /// block either way), at most 5 a second per user (burst 20). The `Idempotency-Key` makes a
    /// resend after a lost answer append nothing twice.
    @Sendable func send(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ChatMessageJSON> {
        let user = try context.user
        let mate = try context.uuidParameter("user_id")
        let body = try await services.body.decode(ChatMessageBody.self, from: request)
        let photo = try body.photo()
        try services.limiter.spend(.messages(user))
        if let photo, try await !services.photoStore.isChatPhoto(photo, of: user, for: mate) {
            throw APIError.validation("photo_id", "photo_id must be a photo uploaded to this conversation")
        }
        let outcome = try await runner.run(
            .sendMessage(messageID: .random(), from: user, to: mate, text: body.text, photoID: photo),
            try context.command
        )
        // A replayed command id answers with the message its first attempt sent. A replay
        // without one is another command's under the same key, whose stored answer is gone
        // (kept 24 hours, or sealed under a replaced secret): the key was reused.
        guard let sent = outcome.events.lazy.compactMap({ if case .messageSent(let e) = $0.event { e } else { nil } }).first else {
            throw APIError.idempotencyKeyReused
        }
        return Answer(
            ChatMessageJSON(sent),
            status: .created,
            logPosition: try await runner.position(of: outcome),
            erasedWith: sent.messageID
        )
    }

    /// `GET /v1/chats`: my conversations, the one with the newest message first.
    @Sendable func conversations(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<ConversationJSON>> {
        let user = try context.user
        let page = try PageRequest(request)
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["chats", "profiles", "mates", "safety"])
        return Answer(try await services.readModels.conversations(of: user, page: page))
    }

    /// `GET /v1/chats/{user_id}/messages[?after=<seq>]`: `404` for someone I never had a
    /// conversation with.
    @Sendable func messages(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<ChatMessageJSON>> {
        let user = try context.user
        let mate = try context.uuidParameter("user_id")
        let page = try PageRequest(request)
        var after: Int?
        if let text = request.uri.queryParameters["after"] {
            guard let seq = Int(String(text)), (0...Int(Int32.max)).contains(seq) else {
                throw APIError.validation("after", "after must be a seq, 0 or more")
            }
            after = seq
        }
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["chats", "mates"])
        guard try await runner.hasConversation(user, with: mate, services) else { throw APIError.notFound }
        return Answer(try await services.readModels.messages(between: user, and: mate, after: after, page: page))
    }

    /// `PATCH /v1/chats/{user_id}/messages/{message_id}`: my own, within 15 minutes.
    @Sendable func edit(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ChatMessageJSON> {
        let user = try context.user
        let mate = try context.uuidParameter("user_id")
        let message = try context.uuidParameter("message_id")
        let body = try await services.body.decode(ChatEditBody.self, from: request)
        let outcome = try await runner.run(.editMessage(messageID: message, by: user, mate: mate, text: body.text), try context.command)
        var edited = try await answer(message, user, mate, outcome)
        edited.erasedWith = message
        return edited
    }

    /// `DELETE /v1/chats/{user_id}/messages/{message_id}`: my own, for both of us; its key is
    /// destroyed with the append.
    @Sendable func unsend(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ChatMessageJSON> {
        let user = try context.user
        let mate = try context.uuidParameter("user_id")
        let message = try context.uuidParameter("message_id")
        // Its photo goes with it, in the same transaction (the read model names it until then).
        let photo = try await services.readModels.message(message, between: user, and: mate).flatMap { $0.from == user ? $0.photoID : nil }
        let outcome = try await runner.run(.unsendMessage(messageID: message, by: user, mate: mate), try context.command) { connection in
            if let photo { try PhotoStore.deleteChatPhoto(photo, owner: user, on: connection) }
            // The stored answers of its send and edits show its text (sealed, but under the
            // server's key, not the message's): they go with the message's key.
            try IdempotencyStore.eraseAnswers(of: message, on: connection)
        }
        return try await answer(message, user, mate, outcome)
    }

    /// The message as the read model shows it once it holds the command's events.
    func answer(_ message: UUID, _ user: UUID, _ mate: UUID, _ outcome: CommandOutcome) async throws -> Answer<ChatMessageJSON> {
        let position = try await runner.position(of: outcome)
        try await services.progress.waitUntil(position, projectors: ["chats"], timeout: .seconds(3))
        guard let row = try await services.readModels.message(message, between: user, and: mate) else { throw APIError.notFound }
        return Answer(ChatMessageJSON(row), logPosition: position)
    }

    /// `PUT /v1/chats/{user_id}/read {"up_to"}`: never backwards, and never past the
    /// conversation's last message (a marker beyond it would hide the next messages from the
    /// unread count); the mate's streams hear of it.
    @Sendable func read(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        let mate = try context.uuidParameter("user_id")
        let asked = try await services.body.decode(ReadMarkerBody.self, from: request).checked()
        guard try await runner.hasConversation(user, with: mate, services) else { throw APIError.notFound }
        // Past the read model's last seq, the log decides: a client may have seen a message (a
        // push, another device) that the read model does not hold yet.
        let upTo =
            try await asked > services.readModels.lastSeq(user, mate)
            ? min(asked, try await runner.lastSeq(between: user, and: mate)) : asked
        try await services.gate.admitted { [pool = services.pool] in
            try await pool.withConnection { connection in
                try connection.transaction { connection in
                    if try ChatsQueries.moveReadMarker(user, mate, upTo: upTo, on: connection) {
                        try ChatSignal.read(reader: user, mate: mate, upTo: upTo).notify(on: connection)
                    }
                }
            }
        }
        return NoContent()
    }

    /// `POST /v1/chats/{user_id}/typing`: shown to the mate for 8 seconds, never stored.
    @Sendable func typing(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        let mate = try context.uuidParameter("user_id")
        guard try await runner.canWrite(user, to: mate) else { throw CommandRefusal(DomainError.notMates.apiError) }
        try await services.gate.admitted { [pool = services.pool] in
            try await pool.withConnection { connection in try ChatSignal.typing(from: user, to: mate).notify(on: connection) }
        }
        return NoContent()
    }
}

/// What travels on `ChatController.signals`: a moved read marker or someone typing.
enum ChatSignal: Equatable, Sendable {
    case read(reader: UUID, mate: UUID, upTo: Int)
    case typing(from: UUID, to: UUID)

    var payload: String {
        switch self {
        case .read(let reader, let mate, let upTo): "read \(reader.lowercasedString) \(mate.lowercasedString) \(upTo)"
        case .typing(let from, let to): "typing \(from.lowercasedString) \(to.lowercasedString)"
        }
    }

    init?(payload: String) {
        let parts = payload.split(separator: " ").map(String.init)
        switch parts.first {
        case "read" where parts.count == 4:
            guard let reader = UUID(text: parts[1]), let mate = UUID(text: parts[2]), let upTo = Int(parts[3]) else { return nil }
            self = .read(reader: reader, mate: mate, upTo: upTo)
        case "typing" where parts.count == 3:
            guard let from = UUID(text: parts[1]), let to = UUID(text: parts[2]) else { return nil }
            self = .typing(from: from, to: to)
        default:
            return nil
        }
    }

    func notify(on connection: Connection) throws {
        try connection.execute("SELECT pg_notify($1, $2)", [ChatController.signals, payload])
    }
}

extension CommandRunner {
    /// Whether `user` may write to `mate` now, as the pair stream in the log says (the read
    /// models may lag behind a pairing that just happened).
    func canWrite(_ user: UUID, to mate: UUID) async throws -> Bool {
        guard user != mate else { return false }
        let handler = self.handler
        let pair = try await gate.admitted { try await handler.states(of: [.mates(user, mate)]) }[.mates(user, mate)]?.mates
        return pair.map { $0.areMates && !$0.isBlocked } ?? false
    }

    /// The `seq` of the newest message between `user` and `mate` in the log (0 before the first).
    func lastSeq(between user: UUID, and mate: UUID) async throws -> Int {
        let handler = self.handler
        let chat = try await gate.admitted { try await handler.states(of: [.chat(user, mate)]) }[.chat(user, mate)]?.chat
        return chat?.lastSeq ?? 0
    }

    /// Whether `user` has a conversation with `mate`: messages in it (the read model), or mates now.
    func hasConversation(_ user: UUID, with mate: UUID, _ services: GatewayServices) async throws -> Bool {
        guard user != mate else { return false }
        if try await services.readModels.hasConversation(user, with: mate) { return true }
        let handler = self.handler
        let pair = try await gate.admitted { try await handler.states(of: [.mates(user, mate)]) }[.mates(user, mate)]?.mates
        return pair?.areMates ?? false
    }
}
