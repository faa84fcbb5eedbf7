import Commands
import Domain
import Foundation
import Hummingbird

/// Walk requests: SendWalk, RespondWalk, cancel, one walk, my walks.
struct WalksController {
    let services: GatewayServices
    let runner: CommandRunner

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/v1/walks", use: send)
        router.post("/v1/walks/{id}/response", use: respond)
        router.delete("/v1/walks/{id}", use: cancel)
        router.get("/v1/walks/{id}", use: walk)
        router.get("/v1/me/walks", use: walks)
    }

    /// `POST /v1/walks`: to a current mate (`409 not_mates`).
    @Sendable func send(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let raw = try await services.body.bytes(request)
        let body = try BodyReader.decode(WalkBody.self, from: raw)
        let to = try body.addressee()
        let runner = self.runner
        return try await runner.run(request, scope: user, body: raw) { metadata in
            let walkID = UUID()
            let outcome = try await runner.handle(.sendWalk(walkID: walkID, from: user, to: to, message: body.message,
                                                            latitude: body.latitude, longitude: body.longitude,
                                                            placeName: body.placeName), metadata)
            // A replayed command id created its walk under the first attempt's id.
            let state = outcome.states.first { $0.key.kind == .walk }?.value.walk
            return .init(status: .created, body: try ResponseEncoder().encode(try await walkJSON(state)),
                         logPosition: try await runner.position(of: outcome))
        }
    }

    /// `POST /v1/walks/{id}/response`.
    @Sendable func respond(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let id = try GatewayServices.uuidParameter(context, "id")
        let raw = try await services.body.bytes(request)
        let answer = try BodyReader.decode(WalkAnswerBody.self, from: raw).parsed()
        return try await change(request, user: user, walk: id, body: raw, .respondWalk(walkID: id, by: user, answer: answer))
    }

    /// `DELETE /v1/walks/{id}`: by the sender, while pending.
    @Sendable func cancel(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let id = try GatewayServices.uuidParameter(context, "id")
        return try await change(request, user: user, walk: id, body: Data(), .cancelWalk(walkID: id, by: user))
    }

    func change(_ request: Request, user: UUID, walk id: UUID, body: Data, _ command: Command) async throws -> Response {
        let runner = self.runner
        return try await runner.run(request, scope: user, body: body) { metadata in
            let outcome = try await runner.handle(command, metadata)
            return .init(status: .ok, body: try ResponseEncoder().encode(try await walkJSON(outcome.states[.walk(id)]?.walk)),
                         logPosition: try await runner.position(of: outcome))
        }
    }

    func walkJSON(_ state: WalkState?) async throws -> WalkJSON {
        guard let state, let sent = state.request, let status = state.status else { throw APIError.notFound }
        let cards = try await runner.cards([sent.from, sent.to])
        return WalkJSON(walkID: sent.walkID, from: cards[sent.from]!, to: cards[sent.to]!, message: sent.message,
                        latitude: sent.latitude, longitude: sent.longitude, placeName: sent.placeName,
                        status: WalkJSON.shownStatus(status.rawValue, expiresAt: sent.expiresAt), createdAt: sent.createdAt,
                        expiresAt: sent.expiresAt, answeredAt: state.answeredAt)
    }

    /// `GET /v1/walks/{id}`: to its sender or addressee; `404` to anyone else.
    @Sendable func walk(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let id = try GatewayServices.uuidParameter(context, "id")
        try await services.awaitMinLogPosition(request, projectors: ["walks", "profiles"])
        guard let walk = try await services.readModels.walk(id, seenBy: user) else { throw APIError.notFound }
        return try GatewayServices.json(walk)
    }

    /// `GET /v1/me/walks?direction=&status=`.
    @Sendable func walks(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let direction = try GatewayServices.queryValue(request, "direction", allowed: ["incoming", "outgoing"]).flatMap(Direction.init)
        let status = try GatewayServices.queryValue(request, "status", allowed: WalkStatus.allCases.map(\.rawValue))
        let page = try PageRequest(request)
        try await services.awaitMinLogPosition(request, projectors: ["walks", "profiles"])
        return try GatewayServices.json(try await services.readModels.walks(of: user, direction: direction, status: status, page: page))
    }
}
