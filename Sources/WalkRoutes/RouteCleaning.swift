/// What the server keeps of a recording: fixes with poor accuracy and fixes that would mean an
/// impossible speed are dropped before any figure is computed.
public enum RouteCleaning {
    /// Fixes reporting a horizontal accuracy worse than this (metres) are dropped.
    public static let maximumAccuracy = 50.0
    /// A fix reached from the last kept one faster than this (m/s, 43 km/h: no dog walks that
    /// fast) is a GPS jump and is dropped; the next fix is measured from the last kept one again.
    public static let maximumSpeed = 12.0

    /// The kept fixes, in order. Points must already be in time order.
    public static func clean(_ points: [TrackPoint]) -> [TrackPoint] {
        var kept: [TrackPoint] = []
        kept.reserveCapacity(points.count)
        for point in points {
            if let accuracy = point.accuracy, !(accuracy <= maximumAccuracy) { continue }
            if let last = kept.last {
                let seconds = point.time - last.time
                let metres = Geodesic.distance(from: last.coordinate, to: point.coordinate)
                // Two fixes at one instant: the second adds nothing, or is a jump.
                if seconds <= 0 { continue }
                if metres / seconds > maximumSpeed { continue }
            }
            kept.append(point)
        }
        return kept
    }
}

/// The figures of a cleaned route.
public struct RouteFigures: Sendable, Equatable {
    /// Seconds from the first to the last kept fix.
    public var elapsedSeconds: Double
    /// Elapsed time less every pause (more than 30 s below 0.5 m/s).
    public var movingSeconds: Double
    /// Sum of the geodesic distances between consecutive kept fixes, metres; a pause counts as
    /// the line from where it began to where it ended.
    public var distanceMetres: Double

    public init(elapsedSeconds: Double, movingSeconds: Double, distanceMetres: Double) {
        self.elapsedSeconds = elapsedSeconds
        self.movingSeconds = movingSeconds
        self.distanceMetres = distanceMetres
    }

    /// Below this speed (m/s) the walker is standing still.
    public static let pauseSpeed = 0.5
    /// A stretch below `pauseSpeed` longer than this (seconds) is a pause and leaves moving time.
    public static let pauseSeconds = 30.0

    /// Measures `points` (already cleaned, in time order).
    public init(_ points: [TrackPoint]) {
        guard let first = points.first, let last = points.last else {
            self.init(elapsedSeconds: 0, movingSeconds: 0, distanceMetres: 0)
            return
        }
        var distance = 0.0
        var paused = 0.0
        // The slow stretch under way: its length in seconds, the distance its fixes add, and
        // where it began. A pause adds only the line from where it began to where it ended, not
        // the jitter of a phone lying still.
        var slowSeconds = 0.0
        var slowMetres = 0.0
        var slowStart = 0
        func endSlowStretch(at end: Int) {
            if slowSeconds > Self.pauseSeconds {
                paused += slowSeconds
                distance += Geodesic.distance(from: points[slowStart].coordinate, to: points[end].coordinate)
            } else {
                distance += slowMetres
            }
            slowSeconds = 0
            slowMetres = 0
        }
        for i in points.indices.dropFirst() {
            let seconds = points[i].time - points[i - 1].time
            let metres = Geodesic.distance(from: points[i - 1].coordinate, to: points[i].coordinate)
            if seconds > 0 && metres / seconds < Self.pauseSpeed {
                if slowSeconds == 0 { slowStart = i - 1 }
                slowSeconds += seconds
                slowMetres += metres
            } else {
                endSlowStretch(at: i - 1)
                distance += metres
            }
        }
        endSlowStretch(at: points.count - 1)
        let elapsed = last.time - first.time
        self.init(elapsedSeconds: elapsed, movingSeconds: elapsed - paused, distanceMetres: distance)
    }
}
