import WalkRoutes
import XCTest

final class RouteFiguresTests: XCTestCase {
    /// The check: a loop with a 2-minute pause, a fix reporting 200 m accuracy and a
    /// one-second 3 km jump. The bad fixes go, the distance is that of the clean fixes as PROJ's
    /// geod measures them (within 1 %), and the pause leaves moving time.
    func testLoopWithPauseBadFixAndJump() throws {
        var walk = RouteFixtures.loop()
        let pauseAt = 600
        let pauseSeconds = 120.0
        // The pause: the walker stands still for two minutes, the fix jittering by 5 cm.
        let stop = walk[pauseAt]
        var paused: [TrackPoint] = []
        for s in 1...Int(pauseSeconds) {
            let jitter = Geodesic.offset(stop.coordinate, bearing: Double(s * 97 % 360), distance: 0.05)
            paused.append(TrackPoint(time: stop.time + Double(s), latitude: jitter.latitude, longitude: jitter.longitude, accuracy: 8))
        }
        for i in (pauseAt + 1)..<walk.count { walk[i].time += pauseSeconds + 1 }
        walk.insert(contentsOf: paused, at: pauseAt + 1)
        let clean = walk
        // A fix 150 m off reporting 200 m accuracy, and a one-second jump of 3 km.
        var recorded = walk
        let bad = Geodesic.offset(walk[300].coordinate, bearing: 45, distance: 150)
        recorded.insert(TrackPoint(time: walk[300].time + 0.5, latitude: bad.latitude, longitude: bad.longitude, accuracy: 200), at: 301)
        let far = Geodesic.offset(walk[1_000].coordinate, bearing: 90, distance: 3_000)
        recorded.insert(TrackPoint(time: walk[1_000].time + 0.5, latitude: far.latitude, longitude: far.longitude, accuracy: 10), at: 1_002)

        let kept = RouteCleaning.clean(recorded)
        XCTAssertEqual(kept, clean)

        let figures = RouteFigures(kept)
        let segments = zip(clean.dropLast(), clean.dropFirst()).map { ($0.coordinate, $1.coordinate) }
        let geodDistance = try GeodReference.distances(segments).reduce(0, +)
        XCTAssertEqual(figures.distanceMetres, geodDistance, accuracy: geodDistance * 0.01)
        // The pause's jitter is not walked distance: the figure is the loop's own length.
        let loop = RouteFixtures.loop()
        let loopDistance = try GeodReference.distances(zip(loop.dropLast(), loop.dropFirst()).map { ($0.coordinate, $1.coordinate) })
            .reduce(0, +)
        XCTAssertEqual(figures.distanceMetres, loopDistance, accuracy: 0.1)
        XCTAssertGreaterThan(geodDistance - figures.distanceMetres, 1)
        let elapsed = clean.last!.time - clean.first!.time
        XCTAssertEqual(figures.elapsedSeconds, elapsed)
        // The pause is 121 s of slow segments (120 jittering fixes and the step back onto the loop
        // is walking pace again, so 120 s + the step onto the first still fix).
        XCTAssertEqual(figures.movingSeconds, elapsed - pauseSeconds - 1, accuracy: 1.0)
        XCTAssertLessThan(figures.movingSeconds, elapsed - pauseSeconds + 1)
    }

    func testFixWorseThanFiftyMetresIsDropped() {
        let points = [
            TrackPoint(time: 0, latitude: 37.5, longitude: 127, accuracy: 5),
            TrackPoint(time: 10, latitude: 37.5001, longitude: 127, accuracy: 50.1),
            TrackPoint(time: 20, latitude: 37.5002, longitude: 127, accuracy: 50),
        ]
        XCTAssertEqual(RouteCleaning.clean(points), [points[0], points[2]])
    }

    func testFixWithoutAccuracyIsKept() {
        let points = [TrackPoint(time: 0, latitude: 37.5, longitude: 127), TrackPoint(time: 10, latitude: 37.5001, longitude: 127)]
        XCTAssertEqual(RouteCleaning.clean(points), points)
    }

    func testFasterThanTwelveMetresASecondIsAJump() {
        let start = Coordinate(latitude: 37.5, longitude: 127)
        let slow = Geodesic.offset(start, bearing: 0, distance: 11.9)
        let fast = Geodesic.offset(slow, bearing: 0, distance: 12.1)
        let points = [
            TrackPoint(time: 0, latitude: start.latitude, longitude: start.longitude),
            TrackPoint(time: 1, latitude: slow.latitude, longitude: slow.longitude),
            TrackPoint(time: 2, latitude: fast.latitude, longitude: fast.longitude),
        ]
        XCTAssertEqual(RouteCleaning.clean(points), [points[0], points[1]])
    }

    func testShortStopIsNotAPause() {
        // 20 s standing still: under the 30 s that makes a pause.
        let points = (0...20).map { TrackPoint(time: Double($0), latitude: 37.5, longitude: 127) }
        let figures = RouteFigures(points)
        XCTAssertEqual(figures.movingSeconds, 20)
        XCTAssertEqual(figures.distanceMetres, 0)
    }

    func testLongStopIsAPause() {
        let points = (0...40).map { TrackPoint(time: Double($0), latitude: 37.5, longitude: 127) }
        XCTAssertEqual(RouteFigures(points).movingSeconds, 0)
        XCTAssertEqual(RouteFigures(points).elapsedSeconds, 40)
    }
}

extension RouteFiguresTests {
    func testJitterDuringAPauseAddsNoDistance() {
        // 60 s lying still, the fix wandering 40 cm back and forth, then a 100 m walk.
        var points = (0...60).map { s in
            TrackPoint(time: Double(s), latitude: 37.5 + (s % 2 == 0 ? 0 : 0.000_003_6), longitude: 127)
        }
        let start = points.last!.coordinate
        for s in 1...100 {
            let c = Geodesic.offset(start, bearing: 90, distance: Double(s))
            points.append(TrackPoint(time: 60 + Double(s), latitude: c.latitude, longitude: c.longitude))
        }
        let figures = RouteFigures(points)
        XCTAssertEqual(figures.distanceMetres, 100 + Geodesic.distance(from: points[0].coordinate, to: start), accuracy: 0.05)
        XCTAssertEqual(figures.movingSeconds, 100)
    }
}
