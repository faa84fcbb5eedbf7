import WalkRoutes
import XCTest

final class RoutePrivacyTests: XCTestCase {
    func testNoShownFixNearEitherEndOrInsideTheZone() throws {
        let route = RouteFixtures.loop(circumference: 3_000).map(\.coordinate)
        let home = route[0]
        let offset = 300.0 / 4
        let circle = PrivacyCircle(centre: Geodesic.offset(home, bearing: 123, distance: offset), radiusMetres: 300)
        let shown = DisplayedRoute(visibleOf: route, hiding: [circle])
        let decoded = try XCTUnwrap(Polyline.decode(shown.polyline))
        XCTAssertFalse(decoded.isEmpty)
        for c in decoded {
            XCTAssertGreaterThan(Geodesic.distance(from: route.first!, to: c), 200)
            XCTAssertGreaterThan(Geodesic.distance(from: route.last!, to: c), 200)
            XCTAssertGreaterThan(Geodesic.distance(from: home, to: c), 300 - offset)
        }
        let bounds = try XCTUnwrap(shown.bounds)
        let decodedBounds = try XCTUnwrap(Bounds(decoded))
        XCTAssertEqual(bounds.south, decodedBounds.south, accuracy: 1e-5)
        XCTAssertEqual(bounds.north, decodedBounds.north, accuracy: 1e-5)
        XCTAssertEqual(bounds.west, decodedBounds.west, accuracy: 1e-5)
        XCTAssertEqual(bounds.east, decodedBounds.east, accuracy: 1e-5)
    }

    func testARouteWhollyInsideAZoneShowsNothing() {
        let route = RouteFixtures.loop(circumference: 600).map(\.coordinate)
        let shown = DisplayedRoute(visibleOf: route, hiding: [PrivacyCircle(centre: route[0], radiusMetres: 1_600)])
        XCTAssertEqual(shown.polyline, "")
        XCTAssertNil(shown.bounds)
    }

    func testWithoutZonesOnlyTheEndsAreCut() {
        let route = RouteFixtures.loop(circumference: 3_000).map(\.coordinate)
        let runs = RoutePrivacy.visibleRuns(of: route, hiding: [])
        XCTAssertEqual(runs.count, 1)
        XCTAssertLessThan(runs[0].count, route.count)
        XCTAssertGreaterThan(runs[0].count, route.count / 2)
    }

    func testTheOwnerSeesTheWholeRoute() {
        let route = RouteFixtures.loop(circumference: 3_000).map(\.coordinate)
        let whole = DisplayedRoute(whole: route)
        let decoded = Polyline.decode(whole.polyline)!
        XCTAssertEqual(decoded.first!.latitude, route.first!.latitude, accuracy: 1e-5)
        XCTAssertEqual(Geodesic.distance(from: decoded.first!, to: route.first!), 0, accuracy: 1)
    }
}
