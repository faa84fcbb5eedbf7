import WalkRoutes
import XCTest

final class GeodesicTests: XCTestCase {
    /// Walk-sized and longer segments, at several latitudes, across the prime meridian, the
    /// antimeridian and the equator.
    static let segments: [(Coordinate, Coordinate)] = [
        (.init(latitude: 37.5665, longitude: 126.9780), .init(latitude: 37.566_51, longitude: 126.978_01)),
        (.init(latitude: 37.5665, longitude: 126.9780), .init(latitude: 37.5666, longitude: 126.9781)),
        (.init(latitude: 37.5665, longitude: 126.9780), .init(latitude: 37.5675, longitude: 126.9790)),
        (.init(latitude: 37.5, longitude: 127.0), .init(latitude: 37.51, longitude: 127.01)),
        (.init(latitude: 51.4779, longitude: -0.0015), .init(latitude: 51.4781, longitude: 0.0015)),
        (.init(latitude: 0.0001, longitude: 30), .init(latitude: -0.0001, longitude: 30.0002)),
        (.init(latitude: 0, longitude: 10), .init(latitude: 0, longitude: 10.01)),
        (.init(latitude: -33.8688, longitude: 151.2093), .init(latitude: -33.8700, longitude: 151.2110)),
        (.init(latitude: 69.6492, longitude: 18.9553), .init(latitude: 69.6510, longitude: 18.9600)),
        (.init(latitude: -16.5, longitude: 179.9995), .init(latitude: -16.5005, longitude: -179.9995)),
        (.init(latitude: 37.5665, longitude: 126.9780), .init(latitude: 35.1796, longitude: 129.0756)),
        (.init(latitude: 40.7128, longitude: -74.0060), .init(latitude: 51.5074, longitude: -0.1278)),
        (.init(latitude: 89.99, longitude: 0), .init(latitude: 89.99, longitude: 90)),
    ]

    func testEverySegmentAgreesWithGeodToAMillimetre() throws {
        let reference = try GeodReference.distances(Self.segments)
        XCTAssertEqual(reference.count, Self.segments.count)
        for (segment, expected) in zip(Self.segments, reference) {
            let d = Geodesic.distance(from: segment.0, to: segment.1)
            XCTAssertEqual(d, expected, accuracy: 0.001, "\(segment)")
        }
    }

    func testSamePointIsZero() {
        let p = Coordinate(latitude: 37.5, longitude: 127)
        XCTAssertEqual(Geodesic.distance(from: p, to: p), 0)
    }

    func testDistanceIsSymmetric() {
        for (p, q) in Self.segments {
            XCTAssertEqual(Geodesic.distance(from: p, to: q), Geodesic.distance(from: q, to: p), accuracy: 1e-6)
        }
    }

    func testOffsetMovesByTheDistanceAsked() throws {
        let home = Coordinate(latitude: 37.5665, longitude: 126.9780)
        for bearing in stride(from: 0.0, to: 360, by: 45) {
            let moved = Geodesic.offset(home, bearing: bearing, distance: 400)
            XCTAssertEqual(Geodesic.distance(from: home, to: moved), 400, accuracy: 0.5)
        }
    }
}
