import Foundation
import WalkRoutes
import XCTest

/// What a mate receives of a route that starts and ends at home.
final class WalkLogPrivacyTests: XCTestCase {
    func testAMateSeesNothingNearHomeAndZonesApplyToOlderLogs() async throws {
        try await GatewayFixture("walk_log_privacy").run { client in
            let owner = try await client.signUp("owner")
            let mate = try await client.signUp("mate")
            try await client.makeMates(owner, mate)
            let home = WalkLogFixtures.home
            let points = WalkLogFixtures.loop(from: home, circumference: 3_000)
            // Recorded before any zone is set.
            let recorded = try await client.record(owner, points)
            let id = try XCTUnwrap(recorded.json["walk_log_id"] as? String)
            let fresh = ["Min-Log-Position": recorded.header("Log-Position")!]

            func matesRoute() async throws -> (route: [Coordinate], bounds: [String: Double]?) {
                let reply = try await client.send(.get, "/v1/walk-logs/\(id)", token: mate.token, headers: fresh)
                XCTAssertEqual(reply.status, 200, reply.text)
                let list = try await client.send(.get, "/v1/users/\(owner.id)/walk-logs", token: mate.token, headers: fresh)
                XCTAssertEqual(list.items.first?["route"] as? String, reply.json["route"] as? String, "the list shows the same cut")
                let route = try XCTUnwrap(Polyline.decode(try XCTUnwrap(reply.json["route"] as? String)))
                return (route, reply.json["bounds"] as? [String: Double])
            }

            // No zone: only the ends are cut.
            let before = try await matesRoute()
            XCTAssertFalse(before.route.isEmpty)
            for c in before.route {
                XCTAssertGreaterThan(Geodesic.distance(from: points.first!.coordinate, to: c), 200)
                XCTAssertGreaterThan(Geodesic.distance(from: points.last!.coordinate, to: c), 200)
            }
            XCTAssertTrue(
                before.route.contains { Geodesic.distance(from: home, to: $0) < 300 },
                "without a zone, 200-300 m from home shows"
            )

            // A 300 m zone at home: its circle is moved by at most a quarter of the radius, so no
            // shown point is within 300 - 75 m of home.
            let zone = #"{"zones": [{"latitude": \#(home.latitude), "longitude": \#(home.longitude), "radius_m": 300}]}"#
            let zoned = try await client.send(.put, "/v1/me/privacy-zones", token: owner.token, json: zone)
            XCTAssertEqual(zoned.status, 200)
            let after = try await matesRoute()
            XCTAssertFalse(after.route.isEmpty)
            XCTAssertNotEqual(after.route, before.route, "the zone changed what the mate sees of an older log")
            for c in after.route {
                XCTAssertGreaterThan(Geodesic.distance(from: points.first!.coordinate, to: c), 200)
                XCTAssertGreaterThan(Geodesic.distance(from: points.last!.coordinate, to: c), 200)
                XCTAssertGreaterThan(Geodesic.distance(from: home, to: c), 300 - 75)
            }
            // Bounds are those of the visible part only.
            let bounds = try XCTUnwrap(after.bounds)
            let visible = try XCTUnwrap(Bounds(after.route))
            XCTAssertEqual(try XCTUnwrap(bounds["south"]), visible.south, accuracy: 1e-5)
            XCTAssertGreaterThan(try XCTUnwrap(bounds["south"]), home.latitude + 0.0003, "the bounds do not reach home")

            // The owner still sees the whole route.
            let own = try await client.send(.get, "/v1/walk-logs/\(id)", token: owner.token, headers: fresh)
            let ownRoute = try XCTUnwrap(Polyline.decode(try XCTUnwrap(own.json["route"] as? String)))
            XCTAssertEqual(Geodesic.distance(from: ownRoute[0], to: home), 0, accuracy: 1.5)

            // A zone covering the whole walk: nothing shown, no bounds.
            let everything = #"{"zones": [{"latitude": \#(home.latitude), "longitude": \#(home.longitude), "radius_m": 1600}]}"#
            let widened = try await client.send(.put, "/v1/me/privacy-zones", token: owner.token, json: everything)
            XCTAssertEqual(widened.status, 200)
            let hidden = try await client.send(.get, "/v1/walk-logs/\(id)", token: mate.token, headers: fresh)
            XCTAssertEqual(hidden.json["route"] as? String, "")
            XCTAssertTrue(hidden.json["bounds"] is NSNull, hidden.text)
            XCTAssertEqual(
                hidden.json["distance_m"] as? Double,
                recorded.json["distance_m"] as? Double,
                "figures are the owner's real ones"
            )
        }
    }
}
