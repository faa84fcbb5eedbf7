/// Why an uploaded route is refused; `field` names the offending request field.
public enum RouteRefusal: Error, Equatable, Sendable {
    /// Fewer than 2 or more than 20,000 points.
    case pointCount
    /// A time that is missing, not RFC 3339, not finite, or earlier than the point before it.
    case time(index: Int)
    /// A latitude that is NaN, infinite or outside [-90, 90].
    case latitude(index: Int)
    /// A longitude that is NaN, infinite or outside [-180, 180].
    case longitude(index: Int)
    /// An accuracy that is negative or not finite.
    case accuracy(index: Int)
    /// More than 12 hours from the first point to the last.
    case tooLong
    /// Fewer than 2 points are left after cleaning.
    case nothingLeft

    /// The request field it concerns, as API.md names it.
    public var field: String {
        switch self {
        case .pointCount, .tooLong, .nothingLeft: "points"
        case .time: "points.time"
        case .latitude: "points.latitude"
        case .longitude: "points.longitude"
        case .accuracy: "points.accuracy"
        }
    }

    /// A human sentence.
    public var message: String {
        switch self {
        case .pointCount: "a walk has 2 to \(RecordedRoute.maximumPoints) points"
        case .time(let i): "point \(i): time missing, malformed or earlier than the point before"
        case .latitude(let i): "point \(i): latitude must be between -90 and 90"
        case .longitude(let i): "point \(i): longitude must be between -180 and 180"
        case .accuracy(let i): "point \(i): accuracy must be a non-negative number"
        case .tooLong: "a walk lasts at most 12 hours"
        case .nothingLeft: "fewer than 2 points are left once inaccurate fixes and jumps are dropped"
        }
    }
}

/// A recording checked, cleaned and measured: what the server keeps.
public struct RecordedRoute: Sendable, Equatable {
    public static let maximumPoints = 20_000
    public static let maximumSeconds = 12.0 * 3_600

    /// The kept fixes (after `RouteCleaning`).
    public var points: [TrackPoint]
    public var figures: RouteFigures

    /// Checks `raw` (count, time order, ranges, 12 hours), cleans it and measures it.
    public init(checking raw: [TrackPoint]) throws(RouteRefusal) {
        guard (2...Self.maximumPoints).contains(raw.count) else { throw .pointCount }
        var previous = -Double.infinity
        for (i, p) in raw.enumerated() {
            guard p.time.isFinite, p.time >= previous else { throw .time(index: i) }
            guard p.latitude.isFinite, (-90...90).contains(p.latitude) else { throw .latitude(index: i) }
            guard p.longitude.isFinite, (-180...180).contains(p.longitude) else { throw .longitude(index: i) }
            if let a = p.accuracy, !(a.isFinite && a >= 0) { throw .accuracy(index: i) }
            previous = p.time
        }
        guard raw[raw.count - 1].time - raw[0].time <= Self.maximumSeconds else { throw .tooLong }
        let kept = RouteCleaning.clean(raw)
        guard kept.count >= 2 else { throw .nothingLeft }
        self.points = kept
        self.figures = RouteFigures(kept)
    }

    /// Wraps points already checked and cleaned (a stored route being read back).
    public init(stored points: [TrackPoint]) {
        self.points = points
        self.figures = RouteFigures(points)
    }
}
