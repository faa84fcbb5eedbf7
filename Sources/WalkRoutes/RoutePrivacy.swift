/// A privacy zone as it is applied: the circle is drawn around the owner's chosen place moved by
/// the zone's fixed random offset, so the cut's edge does not give the place away.
public struct PrivacyCircle: Sendable, Equatable {
    public var centre: Coordinate
    public var radiusMetres: Double

    public init(centre: Coordinate, radiusMetres: Double) {
        self.centre = centre
        self.radiusMetres = radiusMetres
    }
}

/// What someone other than the owner sees of a route.
public enum RoutePrivacy {
    /// Every fix within this many metres of the route's first or last fix is hidden. Measured in a
    /// straight line, which hides at least the first and last 200 m along the route too (a route
    /// is never shorter than the straight line), and also a loop's passes near home.
    public static let endCutMetres = 200.0
    /// Added to every hiding distance: the polyline rounds to 1e-5° (at most ~0.8 m off), which
    /// must not bring a shown fix back inside a cut.
    public static let roundingMargin = 1.5

    /// The runs of `route` a mate may see, in order: the fixes farther than `endCutMetres` from
    /// both ends and outside every circle.
    public static func visibleRuns(of route: [Coordinate], hiding circles: [PrivacyCircle]) -> [[Coordinate]] {
        guard let start = route.first, let end = route.last else { return [] }
        var runs: [[Coordinate]] = []
        var current: [Coordinate] = []
        for c in route {
            let hidden =
                Geodesic.distance(from: start, to: c) <= endCutMetres + roundingMargin
                || Geodesic.distance(from: end, to: c) <= endCutMetres + roundingMargin
                || circles.contains { Geodesic.distance(from: $0.centre, to: c) <= $0.radiusMetres + roundingMargin }
            if hidden {
                if !current.isEmpty { runs.append(current) }
                current = []
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty { runs.append(current) }
        return runs
    }
}

/// A route as a reader receives it: the encoded, simplified polyline and its bounds (nil when
/// nothing is visible).
public struct DisplayedRoute: Sendable, Equatable {
    public var polyline: String
    public var bounds: Bounds?

    /// The whole route, simplified: what its owner sees.
    public init(whole route: [Coordinate], tolerance: Double = Simplification.defaultTolerance) {
        let simplified = Simplification.douglasPeucker(route, tolerance: tolerance)
        self.polyline = Polyline.encode(simplified)
        self.bounds = Bounds(simplified)
    }

    /// What anyone else sees: each visible run simplified on its own (so no hidden fix shapes the
    /// result), the runs joined in order into one polyline.
    public init(visibleOf route: [Coordinate], hiding circles: [PrivacyCircle], tolerance: Double = Simplification.defaultTolerance) {
        let runs = RoutePrivacy.visibleRuns(of: route, hiding: circles)
        let shown = runs.flatMap { Simplification.douglasPeucker($0, tolerance: tolerance) }
        self.polyline = Polyline.encode(shown)
        self.bounds = Bounds(shown)
    }
}
