import WalkRoutes
import XCTest

final class RecordedRouteTests: XCTestCase {
    func walk(_ count: Int, every seconds: Double = 1) -> [TrackPoint] {
        (0..<count).map { TrackPoint(time: 1_764_064_800 + Double($0) * seconds, latitude: 37.5 + Double($0) * 0.000_01, longitude: 127) }
    }

    func refusal(_ points: [TrackPoint]) -> RouteRefusal? {
        do {
            _ = try RecordedRoute(checking: points)
            return nil
        } catch {
            return error
        }
    }

    func testAGoodWalkIsMeasured() throws {
        let route = try RecordedRoute(checking: walk(100))
        XCTAssertEqual(route.points.count, 100)
        XCTAssertEqual(route.figures.elapsedSeconds, 99)
        XCTAssertEqual(route.figures.distanceMetres, 99 * 1.109, accuracy: 1)
    }

    func testOnePointOrMoreThanTwentyThousandIsRefused() {
        XCTAssertEqual(refusal(walk(1)), .pointCount)
        XCTAssertEqual(refusal(walk(20_001)), .pointCount)
    }

    func testOutOfOrderTimeIsRefused() {
        var points = walk(10)
        points[5].time = points[3].time
        XCTAssertEqual(refusal(points), .time(index: 5))
    }

    func testNaNAndOutOfRangeCoordinatesAreRefused() {
        var points = walk(10)
        points[2].coordinate.latitude = .nan
        XCTAssertEqual(refusal(points), .latitude(index: 2))
        points = walk(10)
        points[3].coordinate.longitude = 180.5
        XCTAssertEqual(refusal(points), .longitude(index: 3))
        points = walk(10)
        points[4].coordinate.latitude = -91
        XCTAssertEqual(refusal(points), .latitude(index: 4))
        points = walk(10)
        points[1].time = .infinity
        XCTAssertEqual(refusal(points), .time(index: 1))
        points = walk(10)
        points[1].accuracy = -1
        XCTAssertEqual(refusal(points), .accuracy(index: 1))
    }

    func testMoreThanTwelveHoursIsRefused() {
        XCTAssertEqual(refusal(walk(2, every: 12 * 3_600 + 1)), .tooLong)
        XCTAssertNil(refusal(walk(2, every: 12 * 3_600)))
    }

    func testNothingLeftAfterCleaningIsRefused() {
        var points = walk(3)
        for i in points.indices { points[i].accuracy = 100 }
        XCTAssertEqual(refusal(points), .nothingLeft)
    }
}
