import Commands
import Domain
import Foundation
import Hummingbird
import JSONText

/// Sessions and devices (API.md): transfer codes, signing in on a new phone, the list of my
/// sessions, signing out here or elsewhere.
struct SessionsController {
    let services: GatewayServices
    let runner: CommandRunner

    /// `signIn` is public (rate-limited like sign-up, its token never shown twice); `queries`
    /// are signed-in routes; `commands` are signed-in and idempotent.
    func addRoutes(
        signIn: RouterGroup<GatewayRequestContext>,
        queries: RouterGroup<GatewayRequestContext>,
        commands: RouterGroup<GatewayRequestContext>
    ) {
        commands.post("/v1/me/transfer-codes", use: transferCode)
        signIn.post("/v1/sessions", use: self.signIn)
        queries.get("/v1/me/sessions", use: list)
        queries.delete("/v1/me/session", use: signOut)
        queries.delete("/v1/me/sessions/{id}", use: signOutElsewhere)
    }

    /// `POST /v1/me/transfer-codes`: a one-time code to sign this account in on another phone.
    @Sendable func transferCode(_ request: Request, context: GatewayRequestContext) async throws -> Answer<TransferCodeJSON> {
        let user = try context.user
        let issued = try await services.sessions.issueTransferCode(for: user)
        return Answer(TransferCodeJSON(code: issued.code, expiresAt: issued.expiresAt), status: .created)
    }

    /// `POST /v1/sessions`: the new phone signs in with the code; a new session, its own token.
    @Sendable func signIn(_ request: Request, context: GatewayRequestContext) async throws -> Answer<SignedUpJSON> {
        let code = try await services.body.decode(TransferCodeBody.self, from: request).transferCode
        let signedIn: (user: UUID, token: String)
        do {
            signedIn = try await services.sessions.redeem(code)
        } catch SessionStore.TransferRefusal.invalid {
            throw CommandRefusal(APIError(.forbidden, "invalid_transfer_code", "The transfer code is not valid."))
        } catch SessionStore.TransferRefusal.expired {
            throw CommandRefusal(APIError(.gone, "transfer_code_expired", "The transfer code has expired."))
        } catch SessionStore.TransferRefusal.suspended {
            throw CommandRefusal(.accountSuspended)
        }
        // The profile as the log says (the read models may lag behind a fresh sign-up).
        let states = try await services.gate.admitted { [handler = runner.handler] in
            try await handler.states(of: [.user(signedIn.user)])
        }
        guard let state = states[.user(signedIn.user)]?.user, let profile = state.profile, let registeredAt = state.registeredAt
        else { throw CommandRefusal(.notFound) }
        let json = ProfileJSON(card: CardJSON(userID: signedIn.user, profile: profile), createdAt: registeredAt)
        return Answer(SignedUpJSON(userID: signedIn.user, token: signedIn.token, profile: json), status: .created)
    }

    /// `GET /v1/me/sessions`: my sessions, newest first.
    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<SessionJSON>> {
        let caller = try context.caller
        let page = try PageRequest(request)
        let after = try page.after.map(ReadModels.timeKey)
        let rows = try await services.sessions.sessions(of: caller.user, after: after, limit: page.limit + 1)
        return Answer(
            page.page(rows, item: { SessionJSON(row: $0, current: $0.session == caller.session) }, key: { ReadModels.cursor($0.key) })
        )
    }

    /// `DELETE /v1/me/session`: sign out here.
    @Sendable func signOut(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let caller = try context.caller
        _ = try await services.sessions.revoke(caller.session, of: caller.user)
        return NoContent()
    }

    /// `DELETE /v1/me/sessions/{id}`: sign out another of my devices (`404` for anything else).
    @Sendable func signOutElsewhere(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        let session = try context.uuidParameter("id")
        guard try await services.sessions.revoke(session, of: user) else { throw APIError.notFound }
        return NoContent()
    }
}

/// The answer of `POST /v1/me/transfer-codes`.
struct TransferCodeJSON: JSONObjectWritable {
    var code: String
    var expiresAt: Date

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.string("transfer_code", code)
        object.timestamp("expires_at", expiresAt)
    }
}

/// One of my sessions.
struct SessionJSON: JSONObjectWritable, Sendable {
    var row: SessionStore.Row
    var current: Bool

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("session_id", row.session)
        object.timestamp("created_at", row.createdAt)
        // To the minute: when a phone was last used is all a user needs to tell them apart.
        object.timestamp("last_seen_at", Date(timeIntervalSince1970: (row.lastSeenAt.timeIntervalSince1970 / 60).rounded(.down) * 60))
        object.bool("current", current)
        object.bool("push", row.push)
    }
}
