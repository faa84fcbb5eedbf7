import Commands
import Domain
import Foundation
import Hummingbird
import UUIDText

/// Mate requests (RequestMate, AcceptMate, decline, cancel) and mates (list, unpair).
struct MatesController {
    let services: GatewayServices
    let runner: CommandRunner

    static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// `queries` are signed-in routes; `commands` are signed-in and idempotent.
    func addRoutes(queries: RouterGroup<GatewayRequestContext>, commands: RouterGroup<GatewayRequestContext>) {
        commands.post("/v1/mate-requests", use: requestMate)
        commands.post("/v1/mate-requests/{id}/accept") { request, context in
            try await answer(context) { id, pair, user in .acceptMate(requestID: id, pair: pair, by: user) }
        }
        commands.post("/v1/mate-requests/{id}/decline") { request, context in
            try await answer(context) { id, pair, user in .declineMate(requestID: id, pair: pair, by: user) }
        }
        commands.delete("/v1/mate-requests/{id}") { request, context in
            try await answer(context) { id, pair, user in .cancelMateRequest(requestID: id, pair: pair, by: user) }
        }
        queries.get("/v1/me/mate-requests", use: requests)
        queries.get("/v1/me/mates", use: mates)
        commands.delete("/v1/me/mates/{user_id}", use: unpair)
    }

    /// `POST /v1/mate-requests`: `201` pending, or `200` accepted when `to` had asked me first.
    @Sendable func requestMate(_ request: Request, context: GatewayRequestContext) async throws -> Answer<MateRequestJSON> {
        let user = try context.user
        let body = try await services.body.decode(MateRequestBody.self, from: request)
        let to = try body.addressee()
        // Drop tokens are base64url text; anything else is malformed (a well-formed token that
        // was never handed out is `403 invalid_drop_token`, decided with the request).
        guard (1...200).contains(body.dropToken.utf8.count), body.dropToken.utf8.allSatisfy(Self.isBase64URL) else {
            throw APIError.validation("drop_token", "drop_token is not a drop token")
        }
        let outcome = try await runner.requestMate(from: user, to: to, dropToken: body.dropToken, try context.command)
        guard let state = outcome.states[.mates(MatePair(user, to))]?.mates else { throw CommandRefusal(.notFound) }
        // The request shown: the one this command created or accepted, else (a repeat) the pending one.
        let shownID: UUID? =
            outcome.events.lazy.compactMap { item -> UUID? in
                switch item.event {
                case .mateRequested(let e): e.requestID
                case .mateAccepted(let e): e.requestID
                default: nil
                }
            }.first ?? state.pendingRequestID
        guard let id = shownID, let shown = state.requests[id] else { throw CommandRefusal(.notFound) }
        return Answer(
            try await requestJSON(shown, known: outcome.states),
            status: shown.status == .pending ? .created : .ok,
            logPosition: try await runner.position(of: outcome)
        )
    }

    /// Accept, decline or cancel the request `{id}`: the pair is found in the log; the domain
    /// decides whether the caller may (`not_addressee`, `not_requester`, `not_pending`).
    func answer(
        _ context: GatewayRequestContext,
        _ command: (UUID, MatePair, UUID) -> Command
    ) async throws -> Answer<MateRequestJSON> {
        let user = try context.user
        let id = try context.uuidParameter("id")
        let handler = runner.handler
        guard let pair = try await services.gate.admitted({ try await handler.pairOfRequest(id) }) else {
            throw CommandRefusal(.notFound)
        }
        let outcome = try await runner.run(command(id, pair, user), try context.command)
        guard let shown = outcome.states[.mates(pair)]?.mates?.requests[id] else { throw CommandRefusal(.notFound) }
        return Answer(try await requestJSON(shown, known: outcome.states), logPosition: try await runner.position(of: outcome))
    }

    func requestJSON(_ request: MatesState.Request, known: [StreamName: StreamState]) async throws -> MateRequestJSON {
        let cards = try await runner.cards([request.from, request.to], known: known)
        return MateRequestJSON(
            requestID: request.requestID,
            from: cards[request.from]!,
            to: cards[request.to]!,
            status: request.status.rawValue,
            createdAt: request.createdAt,
            updatedAt: request.updatedAt
        )
    }

    /// Unpairing someone who is not my mate is `404 not_mates` (a missing pair), not the
    /// domain's `409`.
    static let notMates = APIError(.notFound, "not_mates", DomainError.notMates.message)

    /// `DELETE /v1/me/mates/{user_id}`: `204`, or `404 not_mates`.
    @Sendable func unpair(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        guard let mate = context.parameters.get("user_id").flatMap({ UUID(text: $0) }) else { throw Self.notMates }
        do {
            let outcome = try await runner.run(.unpair(by: user, mate: mate), try context.command)
            return NoContent(logPosition: try await runner.position(of: outcome))
        } catch let refusal as CommandRefusal where refusal.error == DomainError.notMates.apiError {
            throw CommandRefusal(Self.notMates)
        }
    }

    /// `GET /v1/me/mate-requests?direction=&status=`.
    @Sendable func requests(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<MateRequestJSON>> {
        let user = try context.user
        let direction = try request.queryValue("direction", allowed: ["incoming", "outgoing"]).flatMap(Direction.init)
        let status = try request.queryValue("status", allowed: ["pending", "accepted", "declined", "cancelled"])
        let page = try PageRequest(request)
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["mate_requests", "profiles"])
        return Answer(try await services.readModels.mateRequests(of: user, direction: direction, status: status, page: page))
    }

    /// `GET /v1/me/mates`.
    @Sendable func mates(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<MateJSON>> {
        let user = try context.user
        let page = try PageRequest(request)
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["mates", "profiles"])
        return Answer(try await services.readModels.mates(of: user, page: page))
    }
}
