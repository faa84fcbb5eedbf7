import Domain
import Foundation
import Hummingbird

/// Users and profiles: sign-up, my profile, device token, drop tokens, someone's card.
struct UsersController {
    let services: GatewayServices

    func addRoutes(to router: Router<GatewayRequestContext>) {
        let table = services.routes
        router.route(table, .get, "/v1/me", use: me)
        router.route(table, .get, "/v1/users/{id}", use: card)
    }

    /// `GET /v1/me`.
    @Sendable func me(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request)
        try await services.awaitMinLogPosition(request, projectors: ["profiles"])
        guard let profile = try await services.readModels.profile(of: user) else { throw APIError.notFound }
        return try GatewayServices.json(profile)
    }

    /// `GET /v1/users/{id}`: the card of a mate or of someone with a request or walk between us.
    @Sendable func card(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request)
        let other = try GatewayServices.uuidParameter(context, "id")
        try await services.awaitMinLogPosition(request, projectors: ["profiles", "mates", "mate_requests", "walks"])
        guard let card = try await services.readModels.card(of: other, seenBy: user) else { throw APIError.notFound }
        return try GatewayServices.json(card)
    }
}
