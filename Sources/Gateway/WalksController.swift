import Domain
import Foundation
import Hummingbird

/// Walk requests.
struct WalksController {
    let services: GatewayServices

    func addRoutes(to router: Router<GatewayRequestContext>) {
        let table = services.routes
        router.route(table, .get, "/v1/walks/{id}", use: walk)
        router.route(table, .get, "/v1/me/walks", use: walks)
    }

    /// `GET /v1/walks/{id}`: to its sender or addressee; `404` to anyone else.
    @Sendable func walk(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request)
        let id = try GatewayServices.uuidParameter(context, "id")
        try await services.awaitMinLogPosition(request, projectors: ["walks", "profiles"])
        guard let walk = try await services.readModels.walk(id, seenBy: user) else { throw APIError.notFound }
        return try GatewayServices.json(walk)
    }

    /// `GET /v1/me/walks?direction=&status=`.
    @Sendable func walks(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request)
        let direction = try GatewayServices.queryValue(request, "direction", allowed: ["incoming", "outgoing"]).flatMap(Direction.init)
        let status = try GatewayServices.queryValue(request, "status", allowed: WalkStatus.allCases.map(\.rawValue))
        let page = try PageRequest(request)
        try await services.awaitMinLogPosition(request, projectors: ["walks", "profiles"])
        return try GatewayServices.json(try await services.readModels.walks(of: user, direction: direction, status: status, page: page))
    }
}
