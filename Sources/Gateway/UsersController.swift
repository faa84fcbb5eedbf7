import Commands
import Domain
import Foundation
import Hummingbird

/// Users and profiles: sign-up, my profile, device token, drop tokens, someone's card.
struct UsersController {
    let services: GatewayServices
    let runner: CommandRunner

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/v1/users", use: signUp)
        router.get("/v1/me", use: me)
        router.patch("/v1/me", use: update)
        router.put("/v1/me/device-token", use: deviceToken)
        router.post("/v1/me/drop-tokens", use: dropToken)
        router.get("/v1/users/{id}", use: card)
    }

    /// `POST /v1/users`: registers the user and stores their token in the same transaction.
    @Sendable func signUp(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        // Sign-ups have a budget of their own per address, beyond that of anonymous requests.
        try services.limiter.spend(.signUp(services.clientAddress(request, context)))
        let raw = try await services.body.bytes(request)
        let profile = try BodyReader.decode(SignUpBody.self, from: raw).profile()
        let runner = self.runner
        return try await runner.run(request, scope: IdempotencyStore.anonymous, body: raw, handsOutToken: true) { metadata in
            let userID = UUID()
            let token = SecretToken.generate()
            let outcome = try await runner.handle(.registerUser(userID: userID, profile: profile), metadata) { connection in
                try TokenStore.store(token, for: userID, on: connection)
            }
            // A replayed sign-up (same key, its stored answer lost in a crash) cannot hand out the
            // token again: it was only ever shown once.
            guard !outcome.replayed, let state = outcome.states[.user(userID)]?.user, let stored = state.profile,
                  let registeredAt = state.registeredAt else {
                throw APIError.alreadyRegistered
            }
            let json = SignedUpJSON(userID: userID, token: token,
                                    profile: ProfileJSON(card: CardJSON(userID: userID, profile: stored), createdAt: registeredAt))
            return .init(status: .created, body: try ResponseEncoder().encode(json), logPosition: try await runner.position(of: outcome))
        }
    }

    /// `GET /v1/me`.
    @Sendable func me(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        try await services.awaitMinLogPosition(request, projectors: ["profiles"])
        guard let profile = try await services.readModels.profile(of: user) else { throw APIError.notFound }
        return try GatewayServices.json(profile)
    }

    /// `PATCH /v1/me`.
    @Sendable func update(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let raw = try await services.body.bytes(request)
        let changes = try BodyReader.decode(ProfileChangesBody.self, from: raw).changes
        let runner = self.runner
        return try await runner.run(request, scope: user, body: raw) { metadata in
            let outcome = try await runner.handle(.updateProfile(userID: user, changes: changes), metadata)
            guard let state = outcome.states[.user(user)]?.user, let profile = state.profile, let registeredAt = state.registeredAt
            else { throw APIError.notFound }
            let json = ProfileJSON(card: CardJSON(userID: user, profile: profile), createdAt: registeredAt)
            return .init(status: .ok, body: try ResponseEncoder().encode(json), logPosition: try await runner.position(of: outcome))
        }
    }

    /// `PUT /v1/me/device-token`.
    @Sendable func deviceToken(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let raw = try await services.body.bytes(request)
        let body = try BodyReader.decode(DeviceTokenBody.self, from: raw)
        let runner = self.runner
        return try await runner.run(request, scope: user, body: raw) { metadata in
            let outcome = try await runner.handle(.setDeviceToken(userID: user, token: body.deviceToken), metadata)
            return .init(status: .noContent, body: nil, logPosition: try await runner.position(of: outcome))
        }
    }

    /// `POST /v1/me/drop-tokens`: a token to put on my profile card (5 minutes, single use).
    /// Drop tokens live outside the log, so the answer has no `Log-Position`.
    @Sendable func dropToken(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let raw = try await services.body.bytes(request)
        let runner = self.runner, services = self.services
        return try await runner.run(request, scope: user, body: raw) { _ in
            let issued = try await services.gate.admitted { try await runner.handler.issueDropToken(for: user) }
            let json = ["drop_token": issued.token, "expires_at": Timestamp.string(from: issued.expiresAt)]
            return .init(status: .created, body: try ResponseEncoder().encode(json), logPosition: nil)
        }
    }

    /// `GET /v1/users/{id}`: the card of a mate or of someone with a request or walk between us.
    @Sendable func card(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try await services.user(request, context)
        let other = try GatewayServices.uuidParameter(context, "id")
        try await services.awaitMinLogPosition(request, projectors: ["profiles", "mates", "mate_requests", "walks"])
        guard let card = try await services.readModels.card(of: other, seenBy: user) else { throw APIError.notFound }
        return try GatewayServices.json(card)
    }
}

/// The answer of `POST /v1/users`.
struct SignedUpJSON: JSONObjectWritable {
    var userID: UUID
    var token: String
    var profile: ProfileJSON

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("user_id", userID)
        object.string("token", token)
        try object.object("profile", profile)
    }
}
