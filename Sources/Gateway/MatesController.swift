import Domain
import Foundation
import Hummingbird

/// Mate requests and mates.
struct MatesController {
    let services: GatewayServices

    func addRoutes(to router: Router<GatewayRequestContext>) {
        let table = services.routes
        router.route(table, .get, "/v1/me/mate-requests", use: requests)
        router.route(table, .get, "/v1/me/mates", use: mates)
    }

    /// `GET /v1/me/mate-requests?direction=&status=`.
    @Sendable func requests(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request)
        let direction = try GatewayServices.queryValue(request, "direction", allowed: ["incoming", "outgoing"]).flatMap(Direction.init)
        let status = try GatewayServices.queryValue(request, "status", allowed: ["pending", "accepted", "declined", "cancelled"])
        let page = try PageRequest(request)
        try await services.awaitMinLogPosition(request, projectors: ["mate_requests", "profiles"])
        return try GatewayServices.json(try await services.readModels.mateRequests(of: user, direction: direction, status: status, page: page))
    }

    /// `GET /v1/me/mates`.
    @Sendable func mates(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request)
        let page = try PageRequest(request)
        try await services.awaitMinLogPosition(request, projectors: ["mates", "profiles"])
        return try GatewayServices.json(try await services.readModels.mates(of: user, page: page))
    }
}
