import WalkRoutes
import XCTest

final class PolylineTests: XCTestCase {
    /// Google's own example from the format's documentation.
    func testGoogleReferenceExample() {
        let points = [
            Coordinate(latitude: 38.5, longitude: -120.2),
            Coordinate(latitude: 40.7, longitude: -120.95),
            Coordinate(latitude: 43.252, longitude: -126.453),
        ]
        XCTAssertEqual(Polyline.encode(points), "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
    }

    func testDecodeInvertsEncodeAtFiveDecimals() throws {
        let points = [
            Coordinate(latitude: 37.56651, longitude: 126.97802),
            Coordinate(latitude: -33.86882, longitude: 151.20932),
            Coordinate(latitude: 0, longitude: -0.00001),
            Coordinate(latitude: 89.99999, longitude: -179.99999),
        ]
        let decoded = try XCTUnwrap(Polyline.decode(Polyline.encode(points)))
        XCTAssertEqual(decoded.count, points.count)
        for (a, b) in zip(decoded, points) {
            XCTAssertEqual(a.latitude, b.latitude, accuracy: 1e-9)
            XCTAssertEqual(a.longitude, b.longitude, accuracy: 1e-9)
        }
    }

    func testEmptyRouteIsEmptyText() {
        XCTAssertEqual(Polyline.encode([]), "")
    }

    func testDecodeRefusesTruncatedText() {
        XCTAssertNil(Polyline.decode("_p~iF~ps|U_"))
    }
}
