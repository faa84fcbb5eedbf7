import Commands
@preconcurrency import Crypto
import Domain
import Foundation
import HTTPTypes
import Hummingbird
import PersonalData
import Postgres
import Projections
import UUIDText
import WalkRoutes

/// Walk logs (API.md, "Walk log"): record a walk (JSON or GPX), read one or a list with privacy
/// applied for everyone but the owner, export GPX, change visibility, delete; privacy zones;
/// weekly and monthly stats.
struct WalkLogController {
    let services: GatewayServices
    let runner: CommandRunner

    /// A walk log upload may be 2 MiB; every other body keeps the 16 KiB limit.
    static let maxUploadBytes = GPX.maximumBytes
    static let gpxContentType = "application/gpx+xml"
    static let readModels = ["walk_logs", "profiles", "mates", "walks"]

    var store: WalkRouteStore { WalkRouteStore(pool: services.pool, gate: services.gate, keys: runner.handler.sealer.keys) }

    /// Runs a read of routes or zones: an owner erased meanwhile (their rows go with their key)
    /// is `404`, never a `500`.
    func readable<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch PersonalDataError.erased {
            throw APIError.notFound
        }
    }

    /// `uploads` are signed in and idempotent with the upload's own body limit; `queries` are
    /// signed in; `commands` are signed in and idempotent.
    func addRoutes(
        uploads: RouterGroup<GatewayRequestContext>,
        queries: RouterGroup<GatewayRequestContext>,
        commands: RouterGroup<GatewayRequestContext>
    ) {
        uploads.post("/v1/walk-logs", use: record)
        queries.get("/v1/walk-logs/{id}", use: walkLog)
        queries.get("/v1/walk-logs/{id}/gpx", use: gpx)
        queries.get("/v1/me/walk-logs", use: myWalkLogs)
        queries.get("/v1/users/{id}/walk-logs", use: usersWalkLogs)
        commands.patch("/v1/walk-logs/{id}", use: changeVisibility)
        commands.delete("/v1/walk-logs/{id}", use: delete)
        queries.put("/v1/me/privacy-zones", use: putZones)
        queries.get("/v1/me/privacy-zones", use: zones)
        queries.get("/v1/me/walk-stats", use: stats)
    }

    // MARK: Recording

    /// What an upload asks for, before checking its points.
    struct Upload {
        var points: [TrackPoint]
        var walkID: UUID?
        var visibility: WalkLogVisibility
    }

    /// `POST /v1/walk-logs`: checked (count, order, ranges, 12 h), cleaned and measured before the
    /// database sees anything; the sealed route is stored in the transaction of `walk_logged`.
    @Sendable func record(_ request: Request, context: GatewayRequestContext) async throws -> Answer<WalkLogJSON> {
        let user = try context.user
        var request = request
        let bytes = try await BodyReader(limit: Self.maxUploadBytes).bytes(&request)
        let upload = try Self.upload(bytes, request: request)
        let route: RecordedRoute
        do {
            route = try RecordedRoute(checking: upload.points)
        } catch {
            throw APIError.validation(error.field, error.message)
        }
        let plain = RouteCoding.encode(route.points)
        let figures = Self.figures(route, digest: WalkRouteStore.digest(plain))
        let metadata = try context.command
        // Named after the command id, so a retry of the same command names the same log and
        // its route's insert is a no-op.
        let id = Self.walkLogID(for: metadata.commandID)
        let store = self.store
        let outcome = try await runner.run(
            .recordWalkLog(walkLogID: id, owner: user, walkID: upload.walkID, figures: figures, visibility: upload.visibility),
            metadata
        ) { connection in
            try store.insert(plain, id: id, owner: user, on: connection)
        }
        let json = try await ownerJSON(outcome.states[.walkLog(id)]?.walkLog, known: outcome.states, route: route.points)
        return Answer(json, status: .created, logPosition: try await runner.position(of: outcome))
    }

    static func walkLogID(for commandID: UUID) -> UUID {
        let hash = Array(SHA256.hash(data: Data("walklog \(commandID.lowercasedString)".utf8)))
        var bytes = Array(hash.prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4 layout, like every other id
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        )
    }

    /// The points and options of an upload: a GPX file (`walk_id` and `visibility` then come as
    /// query parameters) or the JSON body.
    static func upload(_ bytes: Data, request: Request) throws -> Upload {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        if type.hasPrefix(gpxContentType) {
            let points: [TrackPoint]
            do {
                points = try GPX.parse(Array(bytes))
            } catch .tooLarge {
                throw APIError.bodyTooLarge(limit: maxUploadBytes)
            } catch .tooManyPoints {
                throw APIError.validation("points", RouteRefusal.pointCount.message)
            } catch {
                throw APIError.validation("gpx", error.message)
            }
            let query = request.uri.queryParameters
            return Upload(
                points: points,
                walkID: try walkID(query["walk_id"].map(String.init)),
                visibility: try visibility(query["visibility"].map(String.init))
            )
        }
        let body = try BodyReader.decode(WalkLogBody.self, from: bytes)
        guard body.points.count <= RecordedRoute.maximumPoints else { throw APIError.validation("points", RouteRefusal.pointCount.message) }
        var points: [TrackPoint] = []
        points.reserveCapacity(body.points.count)
        for (index, p) in body.points.enumerated() {
            guard let time = RFC3339.parse(Array(p.time.utf8)) else {
                throw APIError.validation("points.time", RouteRefusal.time(index: index).message)
            }
            points.append(TrackPoint(time: time, latitude: p.latitude, longitude: p.longitude, accuracy: p.accuracy))
        }
        return Upload(points: points, walkID: try walkID(body.walkID), visibility: try visibility(body.visibility))
    }

    static func walkID(_ text: String?) throws -> UUID? {
        guard let text else { return nil }
        guard let id = UUID(text: text) else { throw APIError.validation("walk_id", "walk_id must be a walk id") }
        return id
    }

    static func visibility(_ text: String?) throws -> WalkLogVisibility {
        guard let text else { return .mates }
        guard let v = WalkLogVisibility(rawValue: text) else {
            throw APIError.validation("visibility", "visibility must be mates or private")
        }
        return v
    }

    static func figures(_ route: RecordedRoute, digest: String) -> WalkLogFigures {
        let first = route.points.first!.time
        let last = route.points.last!.time
        // The log keeps milliseconds.
        let started = Timestamp.roundedToMilliseconds(Date(timeIntervalSince1970: first))
        let ended = Timestamp.roundedToMilliseconds(Date(timeIntervalSince1970: last))
        let elapsed = Int(route.figures.elapsedSeconds.rounded())
        return WalkLogFigures(
            startedAt: started,
            endedAt: ended,
            elapsedSeconds: elapsed,
            movingSeconds: min(elapsed, max(0, Int(route.figures.movingSeconds.rounded()))),
            distanceM: (route.figures.distanceMetres * 10).rounded() / 10,
            pointCount: route.points.count,
            routeDigest: digest
        )
    }

    // MARK: Reading

    /// The answer to the owner of a log just written: the whole route.
    func ownerJSON(_ state: WalkLogState?, known: [StreamName: StreamState], route: [TrackPoint]?) async throws -> WalkLogJSON {
        guard let state, let logged = state.logged, !state.deleted, let visibility = state.visibility else {
            throw CommandRefusal(.notFound)
        }
        let card = try await runner.cards([logged.owner], known: known)[logged.owner]!
        var points = route
        if points == nil {
            let store = self.store
            points = try await readable { try await store.route(logged.walkLogID) }
        }
        let f = logged.figures
        return WalkLogJSON(
            walkLogID: logged.walkLogID,
            owner: card,
            walkID: logged.walkID,
            startedAt: f.startedAt,
            endedAt: f.endedAt,
            elapsedSeconds: f.elapsedSeconds,
            movingSeconds: f.movingSeconds,
            distanceM: f.distanceM,
            route: DisplayedRoute(whole: (points ?? []).map(\.coordinate)),
            visibility: visibility.rawValue,
            createdAt: logged.createdAt
        )
    }

    /// A stored log as `viewer` sees it: the whole route for its owner, else with the ends and the
    /// owner's privacy zones cut (`zones`, read once per answer). Nil when its route is gone (the
    /// log was deleted after the read model was read).
    func json(_ row: WalkLogRow, viewer: UUID, zones: [PrivacyCircle]?) async throws -> WalkLogJSON? {
        let store = self.store
        guard let points = try await readable({ try await store.route(row.walkLogID) }) else { return nil }
        let coordinates = points.map(\.coordinate)
        let route: DisplayedRoute
        if row.owner.userID == viewer {
            route = DisplayedRoute(whole: coordinates)
        } else {
            let circles: [PrivacyCircle]
            if let zones {
                circles = zones
            } else {
                circles = try await readable { try await store.zones(of: row.owner.userID).map(\.circle) }
            }
            route = DisplayedRoute(visibleOf: coordinates, hiding: circles)
        }
        return WalkLogJSON(
            walkLogID: row.walkLogID,
            owner: CardJSON(row.owner),
            walkID: row.walkID,
            startedAt: row.startedAt,
            endedAt: row.endedAt,
            elapsedSeconds: row.elapsedSeconds,
            movingSeconds: row.movingSeconds,
            distanceM: row.distanceM,
            route: route,
            visibility: row.visibility,
            createdAt: row.createdAt
        )
    }

    /// `GET /v1/walk-logs/{id}`: to its owner; to a mate (or the other walker of its walk) when
    /// visible to mates; `404` to anyone else.
    @Sendable func walkLog(_ request: Request, context: GatewayRequestContext) async throws -> Answer<WalkLogJSON> {
        let user = try context.user
        let id = try context.uuidParameter("id")
        try await services.progress.awaitMinLogPosition(of: request, projectors: Self.readModels)
        guard let row = try await services.gate.run(WalkLogsQueries.walkLog(id, seenBy: user), on: services.pool),
            let json = try await json(row, viewer: user, zones: nil)
        else { throw APIError.notFound }
        return Answer(json)
    }

    /// `GET /v1/walk-logs/{id}/gpx`: the owner's whole route; `404` to anyone else.
    @Sendable func gpx(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let user = try context.user
        let id = try context.uuidParameter("id")
        try await services.progress.awaitMinLogPosition(of: request, projectors: Self.readModels)
        guard let row = try await services.gate.run(WalkLogsQueries.walkLog(id, seenBy: user), on: services.pool),
            row.owner.userID == user, let points = try await readable({ [store] in try await store.route(id) })
        else { throw APIError.notFound }
        let text = GPX.write(points, name: "Walk \(RFC3339.format(row.startedAt.timeIntervalSince1970))")
        var headers = HTTPFields()
        headers[.contentType] = Self.gpxContentType
        headers[.contentDisposition] = "attachment; filename=\"walk-\(id.lowercasedString).gpx\""
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// `GET /v1/me/walk-logs`.
    @Sendable func myWalkLogs(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<WalkLogJSON>> {
        let user = try context.user
        try await services.progress.awaitMinLogPosition(of: request, projectors: Self.readModels)
        return Answer(try await page(of: user, viewer: user, request))
    }

    /// `GET /v1/users/{id}/walk-logs`: a mate's logs that I may see; `404` for anyone not my mate.
    @Sendable func usersWalkLogs(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PageJSON<WalkLogJSON>> {
        let user = try context.user
        let owner = try context.uuidParameter("id")
        // Before the mates check too: the mates read model answers who may look, and the walk
        // logs of a mate just accepted would be `404` instead of a wait.
        try await services.progress.awaitMinLogPosition(of: request, projectors: Self.readModels)
        if owner != user {
            guard try await services.gate.run(WalkLogsQueries.areMates(user, owner), on: services.pool) else { throw APIError.notFound }
        }
        return Answer(try await page(of: owner, viewer: user, request))
    }

    /// One page of `owner`'s logs as `viewer` sees them; the caller has waited for Min-Log-Position.
    func page(of owner: UUID, viewer: UUID, _ request: Request) async throws -> PageJSON<WalkLogJSON> {
        let page = try PageRequest(request)
        let after = try page.after.map(ReadModels.timeKey)
        let rows = try await services.gate.run(
            WalkLogsQueries.walkLogs(of: owner, seenBy: viewer, after: after, limit: page.limit + 1),
            on: services.pool
        )
        let store = self.store
        let zones = owner == viewer ? [] : try await readable { try await store.zones(of: owner).map(\.circle) }
        let shown = Array(rows.prefix(page.limit))
        var items: [WalkLogJSON] = []
        for row in shown {
            if let item = try await json(row, viewer: viewer, zones: zones) { items.append(item) }
        }
        let next = rows.count > page.limit ? shown.last.map { PageRequest.encode(String($0.key.micros), $0.key.id.lowercasedString) } : nil
        return PageJSON(items: items, nextCursor: next)
    }

    // MARK: Changing

    /// `PATCH /v1/walk-logs/{id}` `{"visibility"}`: by the owner; `404` to anyone else.
    @Sendable func changeVisibility(_ request: Request, context: GatewayRequestContext) async throws -> Answer<WalkLogJSON> {
        let user = try context.user
        let id = try context.uuidParameter("id")
        let body = try await services.body.decode(WalkLogVisibilityBody.self, from: request)
        let visibility = try Self.visibility(body.visibility)
        let outcome = try await runner.run(.changeWalkLogVisibility(walkLogID: id, by: user, visibility: visibility), try context.command)
        let json = try await ownerJSON(outcome.states[.walkLog(id)]?.walkLog, known: outcome.states, route: nil)
        return Answer(json, logPosition: try await runner.position(of: outcome))
    }

    /// `DELETE /v1/walk-logs/{id}`: the route's key and points go in the transaction of
    /// `walk_log_deleted`, and so do my stored answers, one of which may hold the route as its
    /// upload answered it.
    @Sendable func delete(_ request: Request, context: GatewayRequestContext) async throws -> NoContent {
        let user = try context.user
        let id = try context.uuidParameter("id")
        let outcome = try await runner.run(.deleteWalkLog(walkLogID: id, by: user), try context.command) { connection in
            try WalkRouteStore.delete(id, on: connection)
            try IdempotencyStore.forget(user, on: connection)
        }
        return NoContent(logPosition: try await runner.position(of: outcome))
    }

    // MARK: Privacy zones

    static let maximumZones = 3
    static let zoneRadius = 200.0...1_600.0

    /// `PUT /v1/me/privacy-zones`: replaces my zones. A zone given again unchanged keeps its
    /// offset (drawing a new one each time would let a reader average the cuts' edges).
    @Sendable func putZones(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PrivacyZonesJSON> {
        let user = try context.user
        let body = try await services.body.decode(PrivacyZonesBody.self, from: request)
        guard body.zones.count <= Self.maximumZones else { throw APIError.validation("zones", "at most 3 privacy zones") }
        for zone in body.zones {
            guard Coordinate(latitude: zone.latitude, longitude: zone.longitude).isValid else {
                throw APIError.validation("latitude", "latitude must be between -90 and 90, longitude between -180 and 180")
            }
            guard Self.zoneRadius.contains(zone.radiusM) else { throw APIError.validation("radius_m", "radius_m must be 200 to 1600") }
        }
        let store = self.store
        let zones = try await services.gate.withConnection(services.pool) { connection in
            try connection.transaction { connection in
                let old = try store.zones(of: user, on: connection)
                let new = body.zones.map { z in
                    let centre = Coordinate(latitude: z.latitude, longitude: z.longitude)
                    return old.first { $0.centre == centre && $0.radiusMetres == z.radiusM }
                        ?? StoredZone.drawn(centre: centre, radiusMetres: z.radiusM)
                }
                try store.putZones(new, of: user, on: connection)
                return new
            }
        }
        return Answer(PrivacyZonesJSON(zones: zones))
    }

    /// `GET /v1/me/privacy-zones`.
    @Sendable func zones(_ request: Request, context: GatewayRequestContext) async throws -> Answer<PrivacyZonesJSON> {
        let user = try context.user
        return Answer(PrivacyZonesJSON(zones: try await store.zones(of: user)))
    }

    // MARK: Stats

    /// `GET /v1/me/walk-stats?tz=Asia/Seoul`: this ISO week, this month and the last 12 weeks,
    /// in the named zone (UTC when none is named).
    @Sendable func stats(_ request: Request, context: GatewayRequestContext) async throws -> Answer<WalkStatsJSON> {
        let user = try context.user
        let tz = request.uri.queryParameters["tz"].map(String.init) ?? "UTC"
        guard tz.utf8.count <= 64, tz.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            try await services.gate.run(WalkLogsQueries.knowsTimeZone(tz), on: services.pool)
        else { throw APIError.validation("tz", "tz must be an IANA time zone name, such as Asia/Seoul") }
        try await services.progress.awaitMinLogPosition(of: request, projectors: ["walk_logs"])
        let stats = try await services.gate.run(WalkLogsQueries.stats(of: user, timeZone: tz, now: Date()), on: services.pool)
        return Answer(WalkStatsJSON(timeZone: tz, stats: stats))
    }
}
