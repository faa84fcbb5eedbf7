import Commands
import Domain
import EventLog
import Foundation
import Hummingbird
import JSONText
import Push

/// The operators' routes for safety (admin token): reviewing reports, suspending accounts.
struct AdminController {
    let services: GatewayServices
    let runner: CommandRunner

    /// `admin` is behind `AdminMiddleware`; `commands` behind it and `IdempotencyMiddleware`.
    func addRoutes(admin: RouterGroup<GatewayRequestContext>, commands: RouterGroup<GatewayRequestContext>) {
        admin.get("/v1/admin/reports", use: reports)
        commands.post("/v1/admin/reports/{id}/resolve", use: resolve)
        commands.post("/v1/admin/users/{id}/suspend", use: suspend)
        commands.post("/v1/admin/users/{id}/unsuspend", use: unsuspend)
        admin.get("/v1/admin/push", use: push)
    }

    /// `GET /v1/admin/push`: pushes pending, retrying, delivered, failed and dropped (nothing
    /// left to send to), the oldest one waiting, and the commonest failure reasons of the last day.
    @Sendable func push(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PushSummaryJSON> {
        let summary = try await services.gate.withConnection(services.pool) { try PushSummary.read(on: $0) }
        services.metrics.registry.makeGauge(name: "sniffmeet_push_retry_queue").set(Double(summary.counts["retrying"] ?? 0))
        return Answer(PushSummaryJSON(summary: summary, configured: services.configuration.apns != nil))
    }

    /// `GET /v1/admin/reports?status=open|resolved` (default `open`), newest first.
    @Sendable func reports(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<ReportJSON>> {
        let status = try request.queryValue("status", allowed: ["open", "resolved"]) ?? "open"
        let page = try PageRequest(request)
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["safety", "profiles", "walks", "chats"])
        return Answer(try await services.readModels.reports(status: status, page: page))
    }

    /// `POST /v1/admin/reports/{id}/resolve`: the report, resolved (again: no change).
    @Sendable func resolve(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ReportJSON> {
        let id = try context.uuidParameter("id")
        let position = try await resolve(id, by: context.operatorName ?? OperatorNames.admin, try context.command)
        guard let resolved = try await services.readModels.report(id) else { throw CommandRefusal(.notFound) }
        return Answer(resolved, logPosition: position)
    }

    /// Resolves report `id` as operator `name`; returns the position once the `safety` read model has it.
    func resolve(_ id: UUID, by name: String, _ metadata: CommandMetadata) async throws -> LogPosition {
        guard let report = try await services.readModels.report(id) else { throw CommandRefusal(.notFound) }
        let outcome = try await runner.run(.resolveReport(reportID: id, reported: report.row.reported.userID, by: name), metadata)
        let position = try await runner.position(of: outcome)
        try await services.progress.waitUntil(position, projectors: ["safety"], timeout: .seconds(3))
        return position
    }

    /// `POST /v1/admin/users/{id}/suspend`: in one transaction the `user_suspended` event, the
    /// withdrawal of their pending mate requests and walks (found in the read models once they
    /// hold the whole log; the append is conditioned on each of those streams), and the end of
    /// every session, announced to every process.
    @Sendable func suspend(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.uuidParameter("id")
        let reason = try await services.body.decode(SuspensionBody.self, from: request).reason
        let position = try await suspend(user, reason: reason, by: context.operatorName ?? OperatorNames.admin, try context.command)
        return NoContent(logPosition: position)
    }

    /// Suspends `user` for `reason` as operator `name`.
    func suspend(_ user: UUID, reason: String, by name: String, _ metadata: CommandMetadata) async throws -> LogPosition {
        let head = try await services.gate.admitted { [log = services.log] in try await log.head() }
        try await services.progress.waitUntil(head, projectors: ["mates", "mate_requests", "walks"], timeout: .seconds(3))
        let ties = try await services.readModels.ties(of: user)
        let outcome = try await runner.run(
            .suspendUser(userID: user, reason: reason, partners: ties.partners, walks: ties.walks, by: name),
            metadata
        ) { connection in
            try SessionStore.suspend(user, on: connection)
        }
        services.sessions.forget(user)
        return try await runner.position(of: outcome)
    }

    /// `POST /v1/admin/users/{id}/unsuspend`: sign-ins work again (their old sessions stay ended).
    @Sendable func unsuspend(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.uuidParameter("id")
        return NoContent(logPosition: try await lift(user, by: context.operatorName ?? OperatorNames.admin, try context.command))
    }

    /// Lifts the suspension of `user` as operator `name`.
    func lift(_ user: UUID, by name: String, _ metadata: CommandMetadata) async throws -> LogPosition {
        let outcome = try await runner.run(.unsuspendUser(userID: user, by: name), metadata) { connection in
            try SessionStore.unsuspend(user, on: connection)
        }
        return try await runner.position(of: outcome)
    }
}

/// The answer of `GET /v1/admin/push`.
struct PushSummaryJSON: JSONObjectWritable, Sendable {
    var summary: PushSummary
    var configured: Bool

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        let counts = summary.counts
        object.bool("configured", configured)
        object.int("pending", counts["pending"] ?? 0)
        object.int("retrying", counts["retrying"] ?? 0)
        object.int("delivered", counts["delivered"] ?? 0)
        object.int("failed", counts["failed"] ?? 0)
        object.int("dropped", counts["dropped"] ?? 0)
        try object.number("oldest_waiting_seconds", summary.oldestWaitingSeconds)
        try object.objects("failure_reasons", summary.failures.map { Reason(reason: $0.reason, count: $0.count) })
    }

    struct Reason: JSONObjectWritable {
        var reason: String
        var count: Int

        func writeMembers(_ object: inout JSONObjectWriter) {
            object.string("reason", reason)
            object.int("count", count)
        }
    }
}
