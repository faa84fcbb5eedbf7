import Commands
import Domain
import Foundation
import Hummingbird
import JSONText
import Postgres
import UUIDText

/// Users and profiles: sign-up, my profile, device token, drop tokens, someone's card.
struct UsersController {
    let services: GatewayServices
    let runner: CommandRunner

    /// `signUp` is the one public command route; `queries` are signed-in routes; `commands`
    /// are signed-in and idempotent.
    func addRoutes(
        signUp: RouterGroup<GatewayRequestContext>,
        queries: RouterGroup<GatewayRequestContext>,
        commands: RouterGroup<GatewayRequestContext>
    ) {
        signUp.post("/v1/users", use: self.signUp)
        queries.get("/v1/me", use: me)
        commands.patch("/v1/me", use: update)
        queries.put("/v1/me/device-token", use: registerDevice)
        queries.delete("/v1/me/device-token", use: unregisterDevice)
        commands.delete("/v1/me", use: deleteAccount)
        commands.post("/v1/me/drop-tokens", use: dropToken)
        queries.get("/v1/users/{id}", use: card)
    }

    /// The public nickname check, behind its own budget per address (`NicknameBudgetMiddleware`).
    func addNicknameRoute(to group: RouterGroup<GatewayRequestContext>) {
        group.get("/v1/nicknames/{nickname}", use: nickname)
    }

    /// `POST /v1/users`: registers the user and opens their session with the same append (group
    /// commit): a refused sign-up opens none.
    @Sendable func signUp(_ request: Request, context: GatewayRequestContext) async throws -> Answer<SignedUpJSON> {
        let profile = try await services.body.decode(SignUpBody.self, from: request).profile()
        // A photo on a card is one its owner uploaded (`PUT /v1/me/photo`); a new account has none.
        guard profile.profileImage == nil else { throw APIError.notMyPhoto }
        let userID = UUID.random()
        let token = SecretToken.generate()
        let session = UUID.random()
        let cacheGeneration = services.sessions.cacheGeneration
        let outcome = try await runner.run(
            .registerUser(userID: userID, profile: profile),
            try context.command,
            sideWrites: { eventID in [SessionStore.opening(token, session: session, for: userID, withEvent: eventID)] }
        )
        // A replayed sign-up (same key, its stored answer lost in a crash) cannot hand out the
        // token again: it was only ever shown once.
        guard !outcome.replayed, let state = outcome.states[.user(userID)]?.user, let stored = state.profile,
            let registeredAt = state.registeredAt
        else {
            throw CommandRefusal(.alreadyRegistered)
        }
        services.sessions.opened(token, as: Caller(user: userID, session: session), readIn: cacheGeneration)
        let json = SignedUpJSON(
            userID: userID,
            token: token,
            profile: ProfileJSON(card: CardJSON(userID: userID, profile: stored), createdAt: registeredAt)
        )
        return Answer(json, status: .created, logPosition: try await runner.position(of: outcome))
    }

    /// `GET /v1/me`.
    @Sendable func me(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ProfileJSON> {
        let user = try context.user
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["profiles"])
        guard let profile = try await services.readModels.profile(of: user) else { throw APIError.notFound }
        return Answer(profile)
    }

    /// `PATCH /v1/me`.
    @Sendable func update(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ProfileJSON> {
        let user = try context.user
        var changes = try await services.body.decode(ProfileChangesBody.self, from: request).changes
        // `profile_image`: the id of a photo of mine, or null; my other photos are deleted with
        // the event (a user keeps at most the one on their card).
        var photos: (@Sendable (Postgres.Connection) throws -> Void)?
        switch changes.profileImage {
        case .none: break
        case .some(.none): photos = { connection in try PhotoStore.deleteAll(of: user, on: connection) }
        case .some(.some(let text)):
            guard let photo = UUID(text: text) else { throw APIError.notMyPhoto }
            changes.profileImage = .some(photo.lowercasedString)
            photos = { connection in
                guard try PhotoStore.owns(photo, owner: user, on: connection) else { throw CommandRefusal(.notMyPhoto) }
                try PhotoStore.deleteAll(of: user, except: photo, on: connection)
            }
        }
        let outcome = try await runner.run(.updateProfile(userID: user, changes: changes), try context.command, inSameTransaction: photos)
        guard let state = outcome.states[.user(user)]?.user, let profile = state.profile, let registeredAt = state.registeredAt
        else { throw CommandRefusal(.notFound) }
        let json = ProfileJSON(card: CardJSON(userID: user, profile: profile), createdAt: registeredAt)
        return Answer(json, logPosition: try await runner.position(of: outcome))
    }

    /// `PUT /v1/me/device-token`: pushes for this session go to this device. Device tokens
    /// belong to sessions, outside the log, so the answer has no `Log-Position`.
    @Sendable func registerDevice(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let caller = try context.caller
        let device = try await services.body.decode(DeviceTokenBody.self, from: request).registration()
        try await services.sessions.register(device, for: caller)
        return NoContent()
    }

    /// `DELETE /v1/me/device-token`: no more pushes for this session.
    @Sendable func unregisterDevice(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        try await services.sessions.unregisterDevice(of: try context.caller)
        return NoContent()
    }

    /// `DELETE /v1/me`: erases the account at once and for good (API.md, "Deleting an account").
    ///
    /// The pairs and walks to settle come from the read models once they hold the whole log as
    /// of now; the deletion's append is conditioned on each of those streams, so a change there
    /// meanwhile makes it decide again. Its key, drop tokens, sessions and stored answers go in
    /// the same transaction as its `user_deleted`.
    @Sendable func deleteAccount(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        let head = try await services.gate.admitted { [log = services.log] in try await log.head() }
        try await services.progress.waitUntil(head, projectors: ["mates", "mate_requests", "walks"], timeout: .seconds(3))
        let ties = try await services.readModels.ties(of: user)
        let outcome = try await runner.run(
            .deleteAccount(userID: user, partners: ties.partners, walks: ties.walks),
            try context.command
        ) { connection in
            try SessionStore.revokeAll(of: user, on: connection)
            try IdempotencyStore.forget(user, on: connection)
            try PhotoStore.deleteAll(of: user, on: connection)
            try WalkRouteStore.deleteAll(of: user, on: connection)
            try PhotoStore.deleteAllChatPhotos(of: user, on: connection)
        }
        // A replayed command id without this deletion is another command's under the same key,
        // whose stored answer is gone (kept 24 hours): nothing was deleted, so no `204`.
        guard outcome.events.contains(where: { if case .userDeleted = $0.event { true } else { false } }) else {
            throw APIError.idempotencyKeyReused
        }
        services.sessions.forget(user)
        return NoContent(logPosition: try await runner.position(of: outcome))
    }

    /// `POST /v1/me/drop-tokens`: a token to put on my profile card (5 minutes, single use).
    /// Drop tokens live outside the log, so the answer has no `Log-Position`.
    @Sendable func dropToken(_ request: Request, context: GatewayRequestContext) async throws -> Answer<DropTokenJSON> {
        let user = try context.user
        let handler = runner.handler
        let issued = try await services.gate.admitted { try await handler.issueDropToken(for: user) }
        return Answer(DropTokenJSON(token: issued.token, expiresAt: issued.expiresAt), status: .created)
    }

    /// `GET /v1/users/{id}`: the card of a mate or of someone with a request or walk between us.
    @Sendable func card(_ request: Request, context: GatewayRequestContext) async throws -> Answer<CardJSON> {
        let user = try context.user
        let other = try context.uuidParameter("id")
        try await services.progress.awaitMinLogPosition(
            of: request,
            projectors: ["profiles", "mates", "mate_requests", "walks", "safety"]
        )
        guard let card = try await services.readModels.card(of: other, seenBy: user) else { throw APIError.notFound }
        return Answer(card)
    }
}

extension UsersController {
    /// `GET /v1/nicknames/{nickname}`: whether the nickname is free, as the log says now (its
    /// nickname stream), and how it would be stored. A sign-up racing it may still take it.
    @Sendable func nickname(_ request: Request, context: GatewayRequestContext) async throws -> Answer<NicknameAvailabilityJSON> {
        // Path segments arrive percent-encoded (Hummingbird decodes only the query).
        guard let raw = (context.parameters.get("nickname") ?? "").removingPercentEncoding else {
            throw APIError.validation("nickname", "nickname is not valid percent-encoded UTF-8")
        }
        let nickname: String
        do { nickname = try FreeText.nickname(raw, length: DogProfile.nicknameLength) } catch { throw error.apiError }
        let handler = runner.handler
        let states = try await services.gate.admitted { try await handler.states(of: [.nickname(nickname)]) }
        let holder = states[.nickname(nickname)]?.nickname?.holder
        return Answer(NicknameAvailabilityJSON(nickname: nickname, available: holder == nil))
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

/// The answer of `POST /v1/me/drop-tokens`.
struct DropTokenJSON: JSONObjectWritable {
    var token: String
    var expiresAt: Date

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.string("drop_token", token)
        object.string("expires_at", Timestamp.string(from: expiresAt))
    }
}
