import Foundation
import WalkRoutes
import XCTest

/// Nothing of a deleted route stays readable in the database: `pg_dump` of everything, after
/// deleting a log and after deleting the account, holds no coordinate of the route and no
/// polyline.
final class WalkLogErasureTests: XCTestCase {
    /// Texts that would betray the route: its polylines (whole and in pieces) and the
    /// coordinates of its fixes as the upload wrote them.
    static func traces(of points: [TrackPoint], answers: [GatewayFixture.Reply]) -> [String] {
        var traces: [String] = []
        for answer in answers {
            guard let route = answer.json["route"] as? String, route.count > 40 else { continue }
            traces.append(route)
            traces.append(String(route.prefix(24)))
            traces.append(String(route.dropFirst(route.count / 2).prefix(24)))
        }
        for p in stride(from: 0, to: points.count, by: 97).map({ points[$0] }) {
            traces.append("\(p.latitude)")
            traces.append("\(p.longitude)")
            traces.append(String(format: "%.5f", p.latitude))
        }
        return traces
    }

    func testDeletedLogAndDeletedAccountLeaveNoRouteInTheDump() async throws {
        let fixture = try GatewayFixture("walk_log_erasure")
        try await fixture.run { client in
            let owner = try await client.signUp("owner")
            let mate = try await client.signUp("mate")
            try await client.makeMates(owner, mate)
            // Somewhere no other fixture or table mentions: Jeju, with fine decimals.
            let somewhere = Coordinate(latitude: 33.456_789_1, longitude: 126.567_891_2)
            let points = WalkLogFixtures.loop(from: somewhere, circumference: 2_000)
            let recorded = try await client.send(
                .post,
                "/v1/walk-logs",
                token: owner.token,
                json: WalkLogFixtures.json(points),
                headers: ["Idempotency-Key": "erase-me"]
            )
            XCTAssertEqual(recorded.status, 201, recorded.text)
            let id = try XCTUnwrap(recorded.json["walk_log_id"] as? String)
            let fresh = ["Min-Log-Position": recorded.header("Log-Position")!]
            let seen = try await client.send(.get, "/v1/walk-logs/\(id)", token: mate.token, headers: fresh)
            XCTAssertEqual(seen.status, 200)
            let traces = Self.traces(of: points, answers: [recorded, seen])
            XCTAssertGreaterThan(traces.count, 40)
            // The route is stored sealed from the start (never in the clear), and is there.
            let whileKept = try AccountDeletionTests.dump(fixture.ownerURL)
            XCTAssertTrue(whileKept.contains(id))
            for trace in traces { XCTAssertFalse(whileKept.contains(trace), "the dump holds \(trace) in the clear") }
            XCTAssertEqual(try client.sql("SELECT count(*) FROM walk_routes")[0][0], "1")

            let deleted = try await client.send(.delete, "/v1/walk-logs/\(id)", token: owner.token)
            XCTAssertEqual(deleted.status, 204, deleted.text)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM walk_routes")[0][0], "0")
            let afterLog = try AccountDeletionTests.dump(fixture.ownerURL)
            for trace in traces { XCTAssertFalse(afterLog.contains(trace), "after deleting the log the dump holds \(trace)") }
            // The upload's stored answer (which held the route) went with it.
            XCTAssertEqual(
                try client.sql("SELECT count(*) FROM idempotency_keys WHERE scope = $1", [UUID(uuidString: owner.id)!])[0][0],
                "0"
            )

            // A second walk and zones, then the account goes.
            let second = try await client.send(.post, "/v1/walk-logs", token: owner.token, json: WalkLogFixtures.json(points))
            XCTAssertEqual(second.status, 201)
            let zone = #"{"zones": [{"latitude": \#(somewhere.latitude), "longitude": \#(somewhere.longitude), "radius_m": 400}]}"#
            let zoned = try await client.send(.put, "/v1/me/privacy-zones", token: owner.token, json: zone)
            XCTAssertEqual(zoned.status, 200)
            let secondSeen = try await client.send(
                .get,
                "/v1/walk-logs/\(second.json["walk_log_id"] as! String)",
                token: mate.token,
                headers: ["Min-Log-Position": second.header("Log-Position")!]
            )
            let moreTraces = traces + Self.traces(of: points, answers: [second, secondSeen])
            let gone = try await client.send(.delete, "/v1/me", token: owner.token)
            XCTAssertEqual(gone.status, 204, gone.text)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM walk_routes")[0][0], "0")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM privacy_zones")[0][0], "0")
            let afterAccount = try AccountDeletionTests.dump(fixture.ownerURL)
            for trace in moreTraces { XCTAssertFalse(afterAccount.contains(trace), "after deleting the account the dump holds \(trace)") }
            let list = try await client.send(
                .get,
                "/v1/users/\(owner.id)/walk-logs",
                token: mate.token,
                headers: ["Min-Log-Position": gone.header("Log-Position")!]
            )
            XCTAssertEqual(list.status, 404)
        }
    }
}
