import Domain
import EventLog
import Foundation
import HTTPTypes
import Hummingbird
import JSONText
import Postgres
import Projections

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.json` and `/v1/admin/projections`.
struct OperationsController {
    let services: GatewayServices

    /// `admin` is the operators' group (`AdminMiddleware`).
    func addRoutes(to router: Router<GatewayRequestContext>, admin: RouterGroup<GatewayRequestContext>) {
        router.get("/healthz") { _, _ in Answer(StatusJSON(status: "ok")) }
        router.get("/readyz", use: ready)
        router.get("/metrics", use: metrics)
        router.get("/openapi.json") { _, _ in Response.json(try OpenAPIDocument.data()) }
        admin.get("/v1/admin/projections", use: projections)
    }

    /// 200 once the database answers and every migration is applied, else 503.
    @Sendable func ready(_ request: Request, context: GatewayRequestContext) async throws -> Answer<StatusJSON> {
        do {
            let migrator = try services.migrator.get()
            let current = try await services.gate.withConnection(services.pool) { try migrator.isCurrent(connection: $0) }
            guard current else {
                throw APIError(
                    .serviceUnavailable,
                    "schema_not_current",
                    "The database schema is not migrated to this version.",
                    headers: ["Retry-After": "5"]
                )
            }
            return Answer(StatusJSON(status: "ready"))
        } catch let error as APIError {
            throw error
        } catch {
            context.logger.warning("not ready", metadata: ["error": "\(error)"])
            throw APIError.unavailable
        }
    }

    /// Prometheus text; projector gauges and the push retry queue are refreshed at scrape time.
    @Sendable func metrics(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        do {
            for status in try await services.progress.status() { services.metrics.recordProjector(status) }
            let retrying = try await services.gate.withConnection(services.pool) {
                try $0.execute("SELECT count(*) FROM push_outbox WHERE state = 'retrying'").first?.int(0) ?? 0
            }
            services.metrics.registry.makeGauge(name: "sniffmeet_push_retry_queue").set(Double(retrying))
        } catch {
            // Still serve request metrics while the database is away.
            context.logger.debug("projector metrics unavailable", metadata: ["error": "\(error)"])
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: services.metrics.render())))
    }

    /// Each projector's checkpoint, lag and state (operators only).
    @Sendable func projections(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ProjectionsJSON> {
        let statuses = try await services.progress.status()
        let head = try await services.gate.admitted { try await services.log.head() }
        return Answer(ProjectionsJSON(head: head.description, projectors: statuses.map(ProjectionsJSON.Projector.init)))
    }
}

/// The answer of `/healthz` and `/readyz`.
struct StatusJSON: JSONObjectWritable {
    var status: String

    func writeMembers(_ object: inout JSONObjectWriter) {
        object.string("status", status)
    }
}

/// The answer of `/v1/admin/projections`.
struct ProjectionsJSON: JSONObjectWritable {
    struct Projector: JSONObjectWritable {
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

        func writeMembers(_ object: inout JSONObjectWriter) throws {
            object.string("name", name)
            object.string("checkpoint", checkpoint)
            object.int("lag_events", Int(lagEvents))
            try object.number("lag_seconds", lagSeconds)
            object.string("state", state)
            object.string("updated_at", updatedAt)
        }
    }
    var head: String
    var projectors: [Projector]

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.string("head", head)
        try object.objects("projectors", projectors)
    }
}
