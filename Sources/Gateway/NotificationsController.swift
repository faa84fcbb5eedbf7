import Domain
import Foundation
import Hummingbird

/// The inbox and its live stream.
struct NotificationsController {
    let services: GatewayServices
    let runner: CommandRunner

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.get("/v1/me/notifications", use: list)
        router.get("/v1/me/notifications/stream", use: NotificationStream(services: services, feed: services.feed).stream)
        router.delete("/v1/me/notifications/{id}", use: dismiss)
    }

    /// `DELETE /v1/me/notifications/{id}`: an event on my own stream (so a rebuild keeps it
    /// dismissed); `404` for an entry that is not in my inbox.
    @Sendable func dismiss(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let id = try GatewayServices.uuidParameter(context, "id")
        let runner = self.runner, services = self.services
        return try await runner.run(request, scope: user, body: Data()) { metadata in
            guard try await services.readModels.hasNotification(id, of: user) else { throw APIError.notFound }
            let outcome = try await runner.handle(.dismissNotification(userID: user, notificationID: id), metadata)
            return .init(status: .noContent, body: nil, logPosition: try await runner.position(of: outcome))
        }
    }

    /// `GET /v1/me/notifications`.
    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let page = try PageRequest(request)
        try await services.awaitMinLogPosition(request, projectors: ["notifications"])
        return try GatewayServices.json(try await services.readModels.notifications(of: user, page: page))
    }
}
