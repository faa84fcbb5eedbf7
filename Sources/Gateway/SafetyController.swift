import Commands
import Domain
import Foundation
import Hummingbird

/// Safety for users (API.md "Safety: blocks and reports"): blocking, unblocking, my blocks,
/// reporting someone I have met.
struct SafetyController {
    let services: GatewayServices
    let runner: CommandRunner

    /// `queries` are signed-in routes; `commands` are signed-in and idempotent.
    func addRoutes(queries: RouterGroup<GatewayRequestContext>, commands: RouterGroup<GatewayRequestContext>) {
        commands.put("/v1/me/blocks/{user_id}", use: block)
        commands.delete("/v1/me/blocks/{user_id}", use: unblock)
        queries.get("/v1/me/blocks", use: blocks)
        commands.post("/v1/reports", use: report)
    }

    /// `PUT /v1/me/blocks/{user_id}`: unpairs us, withdraws a pending request and cancels the
    /// pending walks between us; `204` whether or not the user exists.
    ///
    /// The block is on our pair stream, so a mate request or walk deciding meanwhile fails and
    /// decides again against it. A walk that committed just before the block but after the walks
    /// were looked up is in the read model once it reaches the block: the second look cancels it.
    @Sendable func block(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        let other = try context.uuidParameter("user_id")
        let head = try await services.gate.admitted { [log = services.log] in try await log.head() }
        try await services.progress.waitUntil(head, projectors: ["walks"], timeout: .seconds(3))
        let walks = try await services.readModels.pendingWalks(between: user, and: other)
        let outcome = try await runner.run(.block(by: user, user: other, walks: walks), try context.command)
        var position = try await runner.position(of: outcome)
        if outcome.states[.mates(user, other)]?.mates?.blockedBy.contains(user) == true {
            try await services.progress.waitUntil(position, projectors: ["walks"], timeout: .seconds(3))
            let late = try await services.readModels.pendingWalks(between: user, and: other)
            if !late.isEmpty {
                let sweep = try await runner.run(.block(by: user, user: other, walks: late), .firstUse(actor: user))
                position = try await runner.position(of: sweep)
            }
        }
        return NoContent(logPosition: position)
    }

    /// `DELETE /v1/me/blocks/{user_id}`: we stay unpaired; `204` whatever was blocked.
    @Sendable func unblock(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        let other = try context.uuidParameter("user_id")
        let outcome = try await runner.run(.unblock(by: user, user: other), try context.command)
        return NoContent(logPosition: try await runner.position(of: outcome))
    }

    /// `GET /v1/me/blocks`: whom I blocked, newest first.
    @Sendable func blocks(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<BlockJSON>> {
        let user = try context.user
        let page = try PageRequest(request)
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["safety", "profiles"])
        return Answer(try await services.readModels.blocks(of: user, page: page))
    }

    /// `POST /v1/reports`: about someone I have had a mate request (and so maybe walks) with;
    /// anyone else is `404`. The report's id is its command's id, so a retried request (same
    /// `Idempotency-Key`) names the same report.
    @Sendable func report(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ReportFiledJSON> {
        let user = try context.user
        let body = try await services.body.decode(ReportBody.self, from: request)
        let metadata = try context.command
        let outcome = try await runner.run(
            .report(
                reportID: metadata.commandID,
                reporter: user,
                reported: try body.reportedUser(),
                reason: try body.reportReason(),
                walkID: try body.reportedWalk(),
                // The domain checks it is theirs, in our conversation; anything else is `404`.
                messageID: try body.reportedMessage(),
                note: body.note
            ),
            metadata
        )
        return Answer(ReportFiledJSON(reportID: metadata.commandID), status: .created, logPosition: try await runner.position(of: outcome))
    }
}
