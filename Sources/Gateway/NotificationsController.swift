import Domain
import Foundation
import Hummingbird

/// The inbox and its live stream.
struct NotificationsController {
    let services: GatewayServices

    func addRoutes(to router: Router<GatewayRequestContext>) {
        let table = services.routes
        router.route(table, .get, "/v1/me/notifications", use: list)
        router.route(table, .get, "/v1/me/notifications/stream", use: NotificationStream(services: services).stream)
    }

    /// `GET /v1/me/notifications`.
    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request)
        let page = try PageRequest(request)
        try await services.awaitMinLogPosition(request, projectors: ["notifications"])
        return try GatewayServices.json(try await services.readModels.notifications(of: user, page: page))
    }
}
