import EventLog
import Foundation
import HTTPTypes
import Hummingbird
import Postgres
import Projections
import Domain

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.json` and `/v1/admin/projections`.
struct OperationsController {
    let services: GatewayServices

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.get("/healthz") { _, _ in try GatewayServices.json(["status": "ok"]) }
        router.get("/readyz", use: ready)
        router.get("/metrics", use: metrics)
        router.get("/openapi.json") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/json; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try OpenAPIDocument.data())))
        }
        router.get("/v1/admin/projections", use: projections)
    }

    /// 200 once the database answers and every migration is applied, else 503.
    @Sendable func ready(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        do {
            let migrator = try services.migrator.get()
            let current = try await services.gate.withConnection(services.pool) { try migrator.isCurrent(connection: $0) }
            guard current else {
                throw APIError(.serviceUnavailable, "schema_not_current", "The database schema is not migrated to this version.",
                               headers: ["Retry-After": "5"])
            }
            return try GatewayServices.json(["status": "ready"])
        } catch let error as APIError {
            throw error
        } catch {
            context.logger.warning("not ready", metadata: ["error": "\(error)"])
            throw APIError.unavailable
        }
    }

    /// Prometheus text; projector gauges are refreshed at scrape time.
    @Sendable func metrics(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        do {
            for status in try await services.progress.status() { services.metrics.recordProjector(status) }
        } catch {
            // Still serve request metrics while the database is away.
            context.logger.debug("projector metrics unavailable", metadata: ["error": "\(error)"])
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: services.metrics.render())))
    }

    /// Each projector's checkpoint, lag and state; bearer `SNIFFMEET_ADMIN_TOKEN`.
    @Sendable func projections(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let expected = services.configuration.adminToken, let offered = Authenticator.bearerToken(request),
              TokenStore.constantTimeEqual(Array(TokenStore.hash(offered).utf8), Array(TokenStore.hash(expected).utf8))
        else {
            try services.limiter.spend(.ip(services.clientAddress(request, context)))
            throw APIError.unauthorized
        }
        let statuses = try await services.progress.status()
        let head = try await services.gate.admitted { try await services.log.head() }
        return try GatewayServices.json(ProjectionsJSON(head: head.description, projectors: statuses.map(ProjectionsJSON.Projector.init)))
    }
}

/// The answer of `/v1/admin/projections`.
struct ProjectionsJSON: Encodable {
    struct Projector: Encodable {
        var name: String
        var checkpoint: String
        var lagEvents: Int64
        var lagSeconds: Double
        var state: String
        var updatedAt: String?

        init(_ status: ProjectorStatus) {
            name = status.name
            checkpoint = status.checkpoint.description
            lagEvents = status.lagEvents
            lagSeconds = status.lagSeconds
            state = status.progress.rawValue
            updatedAt = status.updatedAt.map { Domain.Timestamp.string(from: $0) }
        }

        enum CodingKeys: String, CodingKey {
            case name, checkpoint, lagEvents = "lag_events", lagSeconds = "lag_seconds", state, updatedAt = "updated_at"
        }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(checkpoint, forKey: .checkpoint)
            try c.encode(lagEvents, forKey: .lagEvents)
            try c.encode(lagSeconds, forKey: .lagSeconds)
            try c.encode(state, forKey: .state)
            try c.encode(updatedAt, forKey: .updatedAt)
        }
    }
    var head: String
    var projectors: [Projector]
}
