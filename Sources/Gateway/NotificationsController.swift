import Domain
import Foundation
import Hummingbird

/// The inbox and its live stream.
struct NotificationsController {
    let services: GatewayServices
    let runner: CommandRunner

    /// `queries` are signed-in routes; `commands` are signed-in and idempotent.
    func addRoutes(queries: RouterGroup<GatewayRequestContext>, commands: RouterGroup<GatewayRequestContext>) {
        queries.get("/v1/me/notifications", use: list)
        queries.get("/v1/me/notifications/stream", use: NotificationStream(services: services, feed: services.feed).stream)
        commands.delete("/v1/me/notifications/{id}", use: dismiss)
        commands.delete("/v1/me/notifications", use: clear)
    }

    /// `DELETE /v1/me/notifications`: empties my inbox; entries made after it stay. An event on
    /// my own stream, so a rebuilt inbox stays empty too.
    @Sendable func clear(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        let outcome = try await runner.run(.clearNotifications(userID: user), try context.command)
        return NoContent(logPosition: try await runner.position(of: outcome))
    }

    /// `DELETE /v1/me/notifications/{id}`: an event on my own stream (so a rebuild keeps it
    /// dismissed); `404` for an entry that is not in my inbox.
    @Sendable func dismiss(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        let id = try context.uuidParameter("id")
        guard try await services.readModels.hasNotification(id, of: user) else { throw CommandRefusal(.notFound) }
        let outcome = try await runner.run(.dismissNotification(userID: user, notificationID: id), try context.command)
        return NoContent(logPosition: try await runner.position(of: outcome))
    }

    /// `GET /v1/me/notifications`.
    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<NotificationJSON>> {
        let user = try context.user
        let page = try PageRequest(request)
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["notifications"])
        return Answer(try await services.readModels.notifications(of: user, page: page))
    }
}
