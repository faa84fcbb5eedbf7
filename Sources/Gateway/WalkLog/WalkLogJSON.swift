import Domain
import Foundation
import JSONText
import Projections
import WalkRoutes

/// A walk log as API.md shows it: the figures, and the route as this reader may see it.
struct WalkLogJSON: JSONObjectWritable, Sendable {
    var walkLogID: UUID
    var owner: CardJSON
    var walkID: UUID?
    var startedAt: Date
    var endedAt: Date
    var elapsedSeconds: Int
    var movingSeconds: Int
    var distanceM: Double
    var route: DisplayedRoute
    var visibility: String
    var createdAt: Date

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("walk_log_id", walkLogID)
        try object.object("owner", owner)
        object.id("walk_id", walkID)
        object.timestamp("started_at", startedAt)
        object.timestamp("ended_at", endedAt)
        object.int("elapsed_seconds", elapsedSeconds)
        object.int("moving_seconds", movingSeconds)
        try object.number("distance_m", distanceM)
        object.string("route", route.polyline)
        if let b = route.bounds {
            try object.object("bounds") { o in
                try o.number("south", b.south)
                try o.number("west", b.west)
                try o.number("north", b.north)
                try o.number("east", b.east)
            }
        } else {
            object.string("bounds", nil)
        }
        object.string("visibility", visibility)
        object.timestamp("created_at", createdAt)
    }
}

/// `{"zones": [...]}` of the privacy zones routes: the places as their owner set them.
struct PrivacyZonesJSON: JSONObjectWritable, Sendable {
    struct Zone: JSONObjectWritable, Sendable {
        var zone: StoredZone
        func writeMembers(_ object: inout JSONObjectWriter) throws {
            try object.number("latitude", zone.centre.latitude)
            try object.number("longitude", zone.centre.longitude)
            try object.number("radius_m", zone.radiusMetres)
        }
    }

    var zones: [StoredZone]

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        try object.objects("zones", zones.map(Zone.init))
    }
}

/// `GET /v1/me/walk-stats`.
struct WalkStatsJSON: JSONObjectWritable, Sendable {
    struct Totals: JSONObjectWritable, Sendable {
        var weekStart: String?
        var totals: WalkTotals
        func writeMembers(_ object: inout JSONObjectWriter) throws {
            if let weekStart { object.string("week_start", weekStart) }
            object.int("walks", totals.walks)
            try object.number("distance_m", (totals.distanceM * 10).rounded() / 10)
            object.int("moving_seconds", totals.movingSeconds)
        }
    }

    var timeZone: String
    var stats: WalkStats

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.string("time_zone", timeZone)
        try object.object("this_week", Totals(weekStart: stats.weeks.first?.weekStart, totals: stats.thisWeek))
        try object.object("this_month", Totals(weekStart: nil, totals: stats.thisMonth))
        try object.objects("weeks", stats.weeks.map { Totals(weekStart: $0.weekStart, totals: $0.totals) })
    }
}

/// The body of `POST /v1/walk-logs` as JSON.
struct WalkLogBody: Decodable, Sendable {
    struct Point: Decodable, Sendable {
        var time: String
        var latitude: Double
        var longitude: Double
        var accuracy: Double?
    }

    var walkID: String?
    var visibility: String?
    var points: [Point]

    enum CodingKeys: String, CodingKey {
        case walkID = "walk_id"
        case visibility, points
    }
}

/// The body of `PATCH /v1/walk-logs/{id}`.
struct WalkLogVisibilityBody: Decodable, Sendable {
    var visibility: String
}

/// The body of `PUT /v1/me/privacy-zones`.
struct PrivacyZonesBody: Decodable, Sendable {
    struct Zone: Decodable, Sendable {
        var latitude: Double
        var longitude: Double
        var radiusM: Double

        enum CodingKeys: String, CodingKey {
            case latitude, longitude
            case radiusM = "radius_m"
        }
    }

    var zones: [Zone]
}
