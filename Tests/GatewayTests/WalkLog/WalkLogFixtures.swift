import Foundation
import HTTPTypes
import WalkRoutes
import XCTest

/// Recorded walks for the walk log tests, as the app would upload them.
enum WalkLogFixtures {
    static let home = Coordinate(latitude: 37.5665, longitude: 126.9780)
    static let start = 1_764_064_800.0  // 2025-11-25T10:00:00Z

    /// A loop leaving `from` and coming back, one fix a second at 1.4 m/s.
    static func loop(from: Coordinate = home, circumference: Double = 3_000, time: Double = start) -> [TrackPoint] {
        let radius = circumference / (2 * Double.pi)
        let centre = Geodesic.offset(from, bearing: 0, distance: radius)
        let seconds = Int(circumference / 1.4)
        return (0...seconds).map { s in
            let bearing = 180 + Double(s) * 1.4 / radius * 180 / Double.pi
            let c = s == seconds ? from : Geodesic.offset(centre, bearing: bearing, distance: radius)
            return TrackPoint(time: time + Double(s), latitude: c.latitude, longitude: c.longitude, accuracy: 5)
        }
    }

    /// The JSON body of `POST /v1/walk-logs`.
    static func json(_ points: [TrackPoint], walkID: String? = nil, visibility: String? = nil) -> String {
        var members: [String] = []
        if let walkID { members.append(#""walk_id":"\#(walkID)""#) }
        if let visibility { members.append(#""visibility":"\#(visibility)""#) }
        let list = points.map { p in
            #"{"time":"\#(RFC3339.format(p.time))","latitude":\#(p.latitude),"longitude":\#(p.longitude)"#
                + (p.accuracy.map { #","accuracy":\#($0)}"# } ?? "}")
        }
        members.append(#""points":[\#(list.joined(separator: ","))]"#)
        return "{" + members.joined(separator: ",") + "}"
    }
}

extension GatewayFixture.Client {
    /// Uploads `body` as a GPX file.
    func sendGPX(_ uri: String, token: String?, gpx: String, headers extra: [String: String] = [:]) async throws -> GatewayFixture.Reply {
        var headers = extra
        headers["Content-Type"] = "application/gpx+xml"
        return try await send(.post, uri, token: token, body: Data(gpx.utf8), headers: headers)
    }

    /// Records `points` for `user` and returns the answer (asserting 201).
    func record(
        _ user: GatewayFixture.User,
        _ points: [TrackPoint] = WalkLogFixtures.loop(),
        visibility: String? = nil
    )
        async throws -> GatewayFixture.Reply
    {
        let reply = try await send(.post, "/v1/walk-logs", token: user.token, json: WalkLogFixtures.json(points, visibility: visibility))
        XCTAssertEqual(reply.status, 201, reply.text)
        return reply
    }
}
