import Foundation
import WalkRoutes

/// Synthetic recordings for the tests: a walk around a loop at walking pace, one fix a second.
enum RouteFixtures {
    static let home = Coordinate(latitude: 37.5665, longitude: 126.9780)

    /// A loop leaving `start` and coming back, `circumference` metres long, walked at `speed`
    /// m/s, one fix a second from `time`.
    static func loop(
        from start: Coordinate = home,
        circumference: Double = 2_000,
        speed: Double = 1.4,
        time: Double = 1_700_000_000
    )
        -> [TrackPoint]
    {
        let radius = circumference / (2 * Double.pi)
        let centre = Geodesic.offset(start, bearing: 0, distance: radius)
        let seconds = Int(circumference / speed)
        return (0...seconds).map { s in
            // Angle measured from the centre, starting due south (at `start`).
            let angle = Double(s) * speed / radius
            let bearing = 180 + angle * 180 / Double.pi
            let c = s == seconds ? start : Geodesic.offset(centre, bearing: bearing, distance: radius)
            return TrackPoint(time: time + Double(s), latitude: c.latitude, longitude: c.longitude, accuracy: 5)
        }
    }
}
