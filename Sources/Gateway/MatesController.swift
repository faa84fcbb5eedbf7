import Commands
import Domain
import Foundation
import Hummingbird

/// Mate requests (RequestMate, AcceptMate, decline, cancel) and mates (list, unpair).
struct MatesController {
    let services: GatewayServices
    let runner: CommandRunner

    static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/v1/mate-requests", use: requestMate)
        router.post("/v1/mate-requests/{id}/accept") { request, context in
            try await answer(request, context) { id, pair, user in .acceptMate(requestID: id, pair: pair, by: user) }
        }
        router.post("/v1/mate-requests/{id}/decline") { request, context in
            try await answer(request, context) { id, pair, user in .declineMate(requestID: id, pair: pair, by: user) }
        }
        router.delete("/v1/mate-requests/{id}") { request, context in
            try await answer(request, context) { id, pair, user in .cancelMateRequest(requestID: id, pair: pair, by: user) }
        }
        router.get("/v1/me/mate-requests", use: requests)
        router.get("/v1/me/mates", use: mates)
        router.delete("/v1/me/mates/{user_id}", use: unpair)
    }

    /// `POST /v1/mate-requests`: `201` pending, or `200` accepted when `to` had asked me first.
    @Sendable func requestMate(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let raw = try await services.body.bytes(request)
        let body = try BodyReader.decode(MateRequestBody.self, from: raw)
        let to = try body.addressee()
        // Drop tokens are base64url text; anything else is malformed (a well-formed token that
        // was never handed out is `403 invalid_drop_token`, decided with the request).
        guard (1...200).contains(body.dropToken.utf8.count), body.dropToken.utf8.allSatisfy(Self.isBase64URL) else {
            throw APIError.validation("drop_token", "drop_token is not a drop token")
        }
        let runner = self.runner, services = self.services
        return try await runner.run(request, scope: user, body: raw) { metadata in
            let outcome = try await services.gate.admitted {
                try await runner.handler.requestMate(from: user, to: to, dropToken: body.dropToken, metadata: metadata)
            }
            runner.record("RequestMate", outcome)
            let pair = MatePair(user, to)
            guard let state = outcome.states[.mates(pair)]?.mates else { throw APIError.notFound }
            // The request shown: the one this command created or accepted, else (a repeat) the pending one.
            let shownID: UUID? = outcome.events.lazy.compactMap { item -> UUID? in
                switch item.event {
                case .mateRequested(let e): e.requestID
                case .mateAccepted(let e): e.requestID
                default: nil
                }
            }.first ?? state.pendingRequestID
            guard let id = shownID, let shown = state.requests[id] else { throw APIError.notFound }
            let json = try await requestJSON(shown)
            return .init(status: shown.status == .pending ? .created : .ok, body: try ResponseEncoder().encode(json),
                         logPosition: try await runner.position(of: outcome))
        }
    }

    /// Accept, decline or cancel the request `{id}`: the pair is found in the log; the domain
    /// decides whether the caller may (`not_addressee`, `not_requester`, `not_pending`).
    func answer(_ request: Request, _ context: GatewayRequestContext,
                _ command: @escaping @Sendable (UUID, MatePair, UUID) -> Command) async throws -> Response {
        let user = try await services.user(request, context)
        let id = try GatewayServices.uuidParameter(context, "id")
        let raw = request.method == .post ? try await services.body.bytes(request) : Data()
        let runner = self.runner, services = self.services
        return try await runner.run(request, scope: user, body: raw) { metadata in
            guard let pair = try await services.gate.admitted({ try await runner.handler.pairOfRequest(id) }) else {
                throw APIError.notFound
            }
            let outcome = try await runner.handle(command(id, pair, user), metadata)
            guard let shown = outcome.states[.mates(pair)]?.mates?.requests[id] else { throw APIError.notFound }
            let json = try await requestJSON(shown)
            return .init(status: .ok, body: try ResponseEncoder().encode(json), logPosition: try await runner.position(of: outcome))
        }
    }

    func requestJSON(_ request: MatesState.Request) async throws -> MateRequestJSON {
        let cards = try await runner.cards([request.from, request.to])
        return MateRequestJSON(requestID: request.requestID, from: cards[request.from]!, to: cards[request.to]!,
                               status: request.status.rawValue, createdAt: request.createdAt, updatedAt: request.updatedAt)
    }

    /// `DELETE /v1/me/mates/{user_id}`: `204`, or `404 not_mates`.
    @Sendable func unpair(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        guard let mate = context.parameters.get("user_id").flatMap(UUID.init(uuidString:)) else {
            throw APIError(.notFound, "not_mates", DomainError.notMates.message)
        }
        let runner = self.runner
        return try await runner.run(request, scope: user, body: Data()) { metadata in
            do {
                let outcome = try await runner.handle(.unpair(by: user, mate: mate), metadata)
                return .init(status: .noContent, body: nil, logPosition: try await runner.position(of: outcome))
            } catch CommandError.domain(.notMates) {
                throw APIError(.notFound, "not_mates", DomainError.notMates.message)
            }
        }
    }

    /// `GET /v1/me/mate-requests?direction=&status=`.
    @Sendable func requests(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let direction = try GatewayServices.queryValue(request, "direction", allowed: ["incoming", "outgoing"]).flatMap(Direction.init)
        let status = try GatewayServices.queryValue(request, "status", allowed: ["pending", "accepted", "declined", "cancelled"])
        let page = try PageRequest(request)
        try await services.awaitMinLogPosition(request, projectors: ["mate_requests", "profiles"])
        return try GatewayServices.json(try await services.readModels.mateRequests(of: user, direction: direction, status: status, page: page))
    }

    /// `GET /v1/me/mates`.
    @Sendable func mates(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let page = try PageRequest(request)
        try await services.awaitMinLogPosition(request, projectors: ["mates", "profiles"])
        return try GatewayServices.json(try await services.readModels.mates(of: user, page: page))
    }
}
