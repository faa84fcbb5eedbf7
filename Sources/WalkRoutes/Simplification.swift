import Foundation

/// Douglas–Peucker simplification for display.
public enum Simplification {
    /// The display tolerance: a few metres, below what a phone's map shows at street zoom.
    public static let defaultTolerance = 3.0
    /// Distance computations allowed per point before the linear fallback.
    public static let workBudget = 64

    /// The points of `coordinates` that Douglas–Peucker keeps at `tolerance` metres (first and
    /// last always). Distances are taken on a local plane around the route's middle latitude,
    /// which is exact to far better than the tolerance over a walk's extent. Iterative, so a
    /// 20,000-point route needs no deep recursion.
    ///
    /// Douglas–Peucker is O(n log n) on real tracks but O(n²) on a crafted zigzag, and every read
    /// of a route simplifies it: past `workBudget` distance computations per point, the segments
    /// still open keep every point at least `tolerance` from the last kept one (linear).
    public static func douglasPeucker(_ coordinates: [Coordinate], tolerance: Double = defaultTolerance) -> [Coordinate] {
        var work = 0
        return douglasPeucker(coordinates, tolerance: tolerance, work: &work)
    }

    /// `douglasPeucker(_:tolerance:)`, counting in `work` (from zero) every distance it computes:
    /// what the work budget bounds, and what tests hold a crafted route to.
    static func douglasPeucker(_ coordinates: [Coordinate], tolerance: Double, work: inout Int) -> [Coordinate] {
        guard coordinates.count > 2 else { return coordinates }
        let rad = Double.pi / 180
        let midLatitude = (coordinates.map(\.latitude).min()! + coordinates.map(\.latitude).max()!) / 2
        let metresPerDegreeLat = 111_132.954 - 559.822 * cos(2 * midLatitude * rad) + 1.175 * cos(4 * midLatitude * rad)
        let metresPerDegreeLon =
            Double.pi * Geodesic.a * cos(midLatitude * rad)
            / (180 * (1 - Geodesic.f * (2 - Geodesic.f) * pow(sin(midLatitude * rad), 2)).squareRoot())
        let xs = coordinates.map { $0.longitude * metresPerDegreeLon }
        let ys = coordinates.map { $0.latitude * metresPerDegreeLat }
        var keep = [Bool](repeating: false, count: coordinates.count)
        keep[0] = true
        keep[coordinates.count - 1] = true
        var stack = [(0, coordinates.count - 1)]
        let budget = Self.workBudget * coordinates.count
        while let (start, end) = stack.popLast() {
            guard end > start + 1 else { continue }
            work += end - start - 1
            if work > budget {
                var last = start
                for i in (start + 1)..<end where hypot(xs[i] - xs[last], ys[i] - ys[last]) >= tolerance {
                    keep[i] = true
                    last = i
                }
                continue
            }
            var farthest = start
            var farthestDistance = -1.0
            for i in (start + 1)..<end {
                let d = segmentDistance(xs[i], ys[i], xs[start], ys[start], xs[end], ys[end])
                if d > farthestDistance {
                    farthestDistance = d
                    farthest = i
                }
            }
            if farthestDistance > tolerance {
                keep[farthest] = true
                stack.append((start, farthest))
                stack.append((farthest, end))
            }
        }
        return coordinates.indices.filter { keep[$0] }.map { coordinates[$0] }
    }

    /// Distance from (px, py) to the segment (ax, ay)–(bx, by).
    static func segmentDistance(_ px: Double, _ py: Double, _ ax: Double, _ ay: Double, _ bx: Double, _ by: Double) -> Double {
        let dx = bx - ax
        let dy = by - ay
        let lengthSquared = dx * dx + dy * dy
        var t = lengthSquared > 0 ? ((px - ax) * dx + (py - ay) * dy) / lengthSquared : 0
        t = min(1, max(0, t))
        let cx = ax + t * dx - px
        let cy = ay + t * dy - py
        return (cx * cx + cy * cy).squareRoot()
    }
}
