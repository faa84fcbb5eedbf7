import Foundation
import UUIDText

// Payloads of the `walklog-<uuid>` stream. The route's points are never in the log: they are
// sealed in `walk_routes` (DESIGN.md, "Walk log"); `walk_logged` carries the figures and the
// digest of the stored route.

/// Who besides the owner sees a walk log.
public enum WalkLogVisibility: String, Sendable, Equatable, CaseIterable, Codable {
    case mates
    case `private`
}

/// The figures of a recorded walk, as the server measured them from the cleaned route.
public struct WalkLogFigures: Sendable, Equatable {
    /// The first and last kept fix.
    public var startedAt: Date
    public var endedAt: Date
    public var elapsedSeconds: Int
    /// Elapsed time less pauses.
    public var movingSeconds: Int
    /// On the WGS84 ellipsoid, to a tenth of a metre.
    public var distanceM: Double
    /// Kept fixes in the stored route.
    public var pointCount: Int
    /// Lowercase hex SHA-256 of the stored route's plain bytes.
    public var routeDigest: String

    public init(
        startedAt: Date,
        endedAt: Date,
        elapsedSeconds: Int,
        movingSeconds: Int,
        distanceM: Double,
        pointCount: Int,
        routeDigest: String
    ) {
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.elapsedSeconds = elapsedSeconds
        self.movingSeconds = movingSeconds
        self.distanceM = distanceM
        self.pointCount = pointCount
        self.routeDigest = routeDigest
    }
}

/// `walk_logged`: a walk recorded by its owner. Ids, times and the visibility stay in the clear;
/// the distance, moving time, point count and the route's digest are the owner's personal data.
public struct WalkLogged: Sendable, Equatable, Codable {
    public var walkLogID: UUID
    public var owner: UUID
    /// The accepted walk request it belongs to, if any.
    public var walkID: UUID?
    public var figures: WalkLogFigures
    public var visibility: WalkLogVisibility
    public var createdAt: Date

    public init(walkLogID: UUID, owner: UUID, walkID: UUID?, figures: WalkLogFigures, visibility: WalkLogVisibility, createdAt: Date) {
        self.walkLogID = walkLogID
        self.owner = owner
        self.walkID = walkID
        self.figures = figures
        self.visibility = visibility
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case walkLogID = "walk_log_id"
        case owner
        case walkID = "walk_id"
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case elapsedSeconds = "elapsed_seconds"
        case movingSeconds = "moving_seconds"
        case distanceM = "distance_m"
        case pointCount = "point_count"
        case routeDigest = "route_digest"
        case visibility
        case createdAt = "created_at"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        walkLogID = try c.decode(UUID.self, forKey: .walkLogID)
        owner = try c.decode(UUID.self, forKey: .owner)
        walkID = try c.decodeIfPresent(UUID.self, forKey: .walkID)
        figures = WalkLogFigures(
            startedAt: try c.decode(Date.self, forKey: .startedAt),
            endedAt: try c.decode(Date.self, forKey: .endedAt),
            elapsedSeconds: try c.decode(Int.self, forKey: .elapsedSeconds),
            movingSeconds: try c.decode(Int.self, forKey: .movingSeconds),
            distanceM: try c.decode(Double.self, forKey: .distanceM),
            pointCount: try c.decode(Int.self, forKey: .pointCount),
            routeDigest: try c.decode(String.self, forKey: .routeDigest)
        )
        visibility = try c.decode(WalkLogVisibility.self, forKey: .visibility)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesClear {
            try c.encode(walkLogID.lowercasedString, forKey: .walkLogID)
            try c.encode(owner.lowercasedString, forKey: .owner)
            try c.encode(walkID?.lowercasedString, forKey: .walkID)  // explicit null keeps the key set stable
            try c.encode(figures.startedAt, forKey: .startedAt)
            try c.encode(figures.endedAt, forKey: .endedAt)
            try c.encode(figures.elapsedSeconds, forKey: .elapsedSeconds)
            try c.encode(visibility, forKey: .visibility)
            try c.encode(createdAt, forKey: .createdAt)
        }
        if part.writesPersonal {
            try c.encode(figures.movingSeconds, forKey: .movingSeconds)
            try c.encode(figures.distanceM, forKey: .distanceM)
            try c.encode(figures.pointCount, forKey: .pointCount)
            try c.encode(figures.routeDigest, forKey: .routeDigest)
        }
    }
}

/// `walk_log_visibility_changed`.
public struct WalkLogVisibilityChanged: Sendable, Equatable, Codable {
    public var walkLogID: UUID
    public var owner: UUID
    public var visibility: WalkLogVisibility
    public var at: Date

    public init(walkLogID: UUID, owner: UUID, visibility: WalkLogVisibility, at: Date) {
        self.walkLogID = walkLogID
        self.owner = owner
        self.visibility = visibility
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case walkLogID = "walk_log_id"
        case owner, visibility, at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(walkLogID.lowercasedString, forKey: .walkLogID)
        try c.encode(owner.lowercasedString, forKey: .owner)
        try c.encode(visibility, forKey: .visibility)
        try c.encode(at, forKey: .at)
    }
}

/// `walk_log_deleted`: the route's key and row are destroyed in the same transaction.
public struct WalkLogDeleted: Sendable, Equatable, Codable {
    public var walkLogID: UUID
    public var owner: UUID
    public var at: Date

    public init(walkLogID: UUID, owner: UUID, at: Date) {
        self.walkLogID = walkLogID
        self.owner = owner
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case walkLogID = "walk_log_id"
        case owner, at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(walkLogID.lowercasedString, forKey: .walkLogID)
        try c.encode(owner.lowercasedString, forKey: .owner)
        try c.encode(at, forKey: .at)
    }
}
