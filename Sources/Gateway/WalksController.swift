import Commands
import Domain
import Foundation
import Hummingbird
import Postgres

/// Walk requests: SendWalk, RespondWalk, cancel, one walk, my walks.
struct WalksController {
    let services: GatewayServices
    let runner: CommandRunner

    /// `queries` are signed-in routes; `commands` are signed-in and idempotent.
    func addRoutes(queries: RouterGroup<GatewayRequestContext>, commands: RouterGroup<GatewayRequestContext>) {
        commands.post("/v1/walks", use: send)
        commands.post("/v1/walks/{id}/response", use: respond)
        commands.delete("/v1/walks/{id}", use: cancel)
        queries.get("/v1/walks/{id}", use: walk)
        queries.get("/v1/me/walks", use: walks)
    }

    /// `POST /v1/walks`: to a current mate (`409 not_mates`).
    @Sendable func send(_ request: Request, context: GatewayRequestContext) async throws -> Answer<WalkJSON> {
        let user = try context.user
        let body = try await services.body.decode(WalkBody.self, from: request)
        let to = try body.addressee()
        let outcome = try await runner.run(
            .sendWalk(
                walkID: .random(),
                from: user,
                to: to,
                message: body.message,
                latitude: body.latitude,
                longitude: body.longitude,
                placeName: body.placeName
            ),
            try context.command
        )
        // A replayed command id created its walk under the first attempt's id.
        let state = outcome.states.first { $0.key.kind == .walk }?.value.walk
        return Answer(
            try await walkJSON(state, known: outcome.states),
            status: .created,
            logPosition: try await runner.position(of: outcome)
        )
    }

    /// `POST /v1/walks/{id}/response`.
    @Sendable func respond(_ request: Request, context: GatewayRequestContext) async throws -> Answer<WalkJSON> {
        let user = try context.user
        let id = try context.uuidParameter("id")
        let answer = try await services.body.decode(WalkAnswerBody.self, from: request).parsed()
        return try await change(walk: id, .respondWalk(walkID: id, by: user, answer: answer), try context.command)
    }

    /// `DELETE /v1/walks/{id}`: by the sender, while pending.
    @Sendable func cancel(_ request: Request, context: GatewayRequestContext) async throws -> Answer<WalkJSON> {
        let user = try context.user
        let id = try context.uuidParameter("id")
        return try await change(walk: id, .cancelWalk(walkID: id, by: user), try context.command)
    }

    func change(walk id: UUID, _ command: Command, _ metadata: CommandMetadata) async throws -> Answer<WalkJSON> {
        let outcome = try await runner.run(command, metadata)
        return Answer(
            try await walkJSON(outcome.states[.walk(id)]?.walk, known: outcome.states),
            logPosition: try await runner.position(of: outcome)
        )
    }

    func walkJSON(_ state: WalkState?, known: [StreamName: StreamState]) async throws -> WalkJSON {
        guard let state, let sent = state.request, let status = state.status else { throw CommandRefusal(.notFound) }
        let cards = try await runner.cards([sent.from, sent.to], known: known)
        return WalkJSON(
            walkID: sent.walkID,
            from: cards[sent.from]!,
            to: cards[sent.to]!,
            message: sent.message,
            latitude: sent.latitude,
            longitude: sent.longitude,
            placeName: sent.placeName,
            status: WalkJSON.shownStatus(status.rawValue, expiresAt: sent.expiresAt),
            createdAt: sent.createdAt,
            expiresAt: sent.expiresAt,
            answeredAt: state.answeredAt
        )
    }

    /// `GET /v1/walks/{id}`: to its sender or addressee; `404` to anyone else.
    @Sendable func walk(_ request: Request, context: GatewayRequestContext) async throws -> Answer<WalkJSON> {
        let user = try context.user
        let id = try context.uuidParameter("id")
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["walks", "profiles"])
        guard let walk = try await services.readModels.walk(id, seenBy: user) else { throw APIError.notFound }
        return Answer(walk)
    }

    /// `GET /v1/me/walks?direction=&status=`.
    @Sendable func walks(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<WalkJSON>> {
        let user = try context.user
        let direction = try request.queryValue("direction", allowed: ["incoming", "outgoing"]).flatMap(Direction.init)
        let status = try request.queryValue("status", allowed: WalkStatus.allCases.map(\.rawValue))
        let page = try PageRequest(request)
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["walks", "profiles"])
        return Answer(try await services.readModels.walks(of: user, direction: direction, status: status, page: page))
    }
}
