import XCTest

@testable import WalkRoutes

final class SimplificationTests: XCTestCase {
    let origin = Coordinate(latitude: 37.5665, longitude: 126.9780)

    func east(_ metres: Double, north: Double = 0) -> Coordinate {
        let e = Geodesic.offset(origin, bearing: 90, distance: metres)
        return north == 0 ? e : Geodesic.offset(e, bearing: north > 0 ? 0 : 180, distance: abs(north))
    }

    func testStraightLineKeepsOnlyItsEnds() {
        let line = (0...100).map { east(Double($0) * 10) }
        XCTAssertEqual(Simplification.douglasPeucker(line, tolerance: 3), [line.first!, line.last!])
    }

    func testCornerFartherThanToleranceIsKept() {
        let route = [east(0), east(50, north: 10), east(100)]
        XCTAssertEqual(Simplification.douglasPeucker(route, tolerance: 3), route)
    }

    func testWiggleWithinToleranceIsDropped() {
        let route = [east(0), east(25, north: 1), east(50, north: -1), east(75, north: 2), east(100)]
        XCTAssertEqual(Simplification.douglasPeucker(route, tolerance: 3), [route[0], route[4]])
    }

    func testNestedCornersAreFoundRecursively() {
        // A square wave: every corner is farther than the tolerance from the chord.
        let route = [east(0), east(0, north: 20), east(20, north: 20), east(20), east(40), east(40, north: 20)]
        XCTAssertEqual(Simplification.douglasPeucker(route, tolerance: 3), route)
    }

    func testTwoPointsStayAsTheyAre() {
        let route = [east(0), east(1)]
        XCTAssertEqual(Simplification.douglasPeucker(route), route)
    }

    func testTwentyThousandPointsNeedNoRecursion() {
        // A 20,000-point circle of 1 km radius: kept where the arc leaves the chord by 3 m.
        let centre = east(0)
        let route = (0..<20_000).map { Geodesic.offset(centre, bearing: Double($0) * 360 / 20_000, distance: 1_000) }
        let simplified = Simplification.douglasPeucker(route, tolerance: 3)
        XCTAssertEqual(simplified.first, route.first)
        XCTAssertEqual(simplified.last, route.last)
        // A chord leaves a 1 km circle by 3 m over 2·√(2·1000·3) ≈ 155 m: about 41 chords.
        XCTAssertGreaterThan(simplified.count, 30)
        XCTAssertLessThan(simplified.count, 100)
    }

    /// A crafted zigzag makes Douglas–Peucker quadratic; the work budget keeps it linear, and
    /// still keeps every corner farther apart than the tolerance. Counted in distances computed,
    /// not timed: unbounded, they grow with the square of the route's length.
    func testACraftedZigzagStaysCheap() {
        let route = (0..<20_000).map { east(Double($0), north: Double($0 % 2) * 5) }
        var work = 0
        let simplified = Simplification.douglasPeucker(route, tolerance: 3, work: &work)
        XCTAssertLessThanOrEqual(work, (Simplification.workBudget + 1) * route.count)
        XCTAssertGreaterThan(work, route.count, "the count counts")
        XCTAssertEqual(simplified.first, route.first)
        XCTAssertEqual(simplified.last, route.last)
        XCTAssertGreaterThan(simplified.count, 5_000)
    }

    func testBoundsAreTheExtremes() {
        let b = Bounds([
            Coordinate(latitude: 1, longitude: 5), Coordinate(latitude: -2, longitude: 3), Coordinate(latitude: 0, longitude: 7),
        ])
        XCTAssertEqual(b, Bounds(south: -2, west: 3, north: 1, east: 7))
        XCTAssertNil(Bounds([Coordinate]()))
    }
}
