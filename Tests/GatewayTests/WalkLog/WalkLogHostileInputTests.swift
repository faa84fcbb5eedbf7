import Foundation
import WalkRoutes
import XCTest

/// Uploads built to hurt: each gets its 4xx quickly, and nothing is stored.
final class WalkLogHostileInputTests: XCTestCase {
    static let billionLaughs: String = {
        var text = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n"
        for n in 1...9 {
            let previous = n == 1 ? "lol" : "lol\(n - 1)"
            text += "<!ENTITY lol\(n) \"" + String(repeating: "&\(previous);", count: 10) + "\">\n"
        }
        return text + "]>\n<gpx version=\"1.1\"><trk><name>&lol9;</name><trkseg></trkseg></trk></gpx>"
    }()

    static let externalEntity = """
        <?xml version="1.0"?>
        <!DOCTYPE gpx [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
        <gpx version="1.1"><trk><name>&secret;</name></trk></gpx>
        """

    func testHostileUploadsAreRefusedAndStoreNothing() async throws {
        try await GatewayFixture("walk_log_hostile").run { client in
            let user = try await client.signUp("walker")
            let t = user.token
            let events = try client.sql("SELECT count(*) FROM events")[0][0]

            for gpx in [Self.billionLaughs, Self.externalEntity] {
                let reply = try await client.sendGPX("/v1/walk-logs", token: t, gpx: gpx)
                XCTAssertError(reply, 400, "validation_failed", field: "gpx")
                XCTAssertFalse(reply.text.contains("root:"), "the external entity was read")
                XCTAssertFalse(reply.text.contains("lollol"))
            }
            XCTAssertError(
                try await client.sendGPX("/v1/walk-logs", token: t, gpx: "<gpx><trk><name>&xxe;</name></trk></gpx>"),
                400,
                "validation_failed",
                field: "gpx"
            )

            let walk = WalkLogFixtures.loop(circumference: 500)
            func refused(_ points: [TrackPoint], field: String, line: UInt = #line) async throws {
                XCTAssertError(
                    try await client.send(.post, "/v1/walk-logs", token: t, json: WalkLogFixtures.json(points)),
                    400,
                    "validation_failed",
                    field: field,
                    line: line
                )
            }
            var outOfOrder = walk
            outOfOrder[10].time = outOfOrder[5].time
            try await refused(outOfOrder, field: "points.time")
            var outOfRange = walk
            outOfRange[3].coordinate.latitude = 90.5
            try await refused(outOfRange, field: "points.latitude")
            outOfRange = walk
            outOfRange[3].coordinate.longitude = -181
            try await refused(outOfRange, field: "points.longitude")
            try await refused(Array(walk.prefix(1)), field: "points")
            try await refused([walk[0], TrackPoint(time: walk[0].time + 12 * 3_600 + 1, latitude: 37.5, longitude: 127)], field: "points")
            // NaN is no JSON number.
            let nan =
                #"{"points": [{"time": "2025-11-25T10:00:00Z", "latitude": NaN, "longitude": 0}, {"time": "2025-11-25T10:00:01Z", "latitude": 0, "longitude": 0}]}"#
            XCTAssertError(try await client.send(.post, "/v1/walk-logs", token: t, json: nan), 400, "invalid_json")
            let badTime =
                #"{"points": [{"time": "yesterday", "latitude": 0, "longitude": 0}, {"time": "2025-11-25T10:00:01Z", "latitude": 0, "longitude": 0}]}"#
            XCTAssertError(
                try await client.send(.post, "/v1/walk-logs", token: t, json: badTime),
                400,
                "validation_failed",
                field: "points.time"
            )

            // 20,001 points: as JSON (under 2 MiB) and as GPX.
            let many = (0...20_000).map { s in TrackPoint(time: WalkLogFixtures.start + Double(s), latitude: 37.5, longitude: 127) }
            let manyJSON =
                #"{"points":["#
                + many.map { #"{"time":"\#(RFC3339.format($0.time))","latitude":37.5,"longitude":127}"# }
                .joined(separator: ",") + "]}"
            XCTAssertLessThan(manyJSON.utf8.count, 2 * 1_024 * 1_024)
            XCTAssertError(
                try await client.send(.post, "/v1/walk-logs", token: t, json: manyJSON),
                400,
                "validation_failed",
                field: "points"
            )
            let manyGPX = GPX.write(many, name: "many")
            XCTAssertLessThan(manyGPX.utf8.count, 2 * 1_024 * 1_024)
            XCTAssertError(try await client.sendGPX("/v1/walk-logs", token: t, gpx: manyGPX), 400, "validation_failed", field: "points")

            // Over 2 MiB: 413, for JSON and GPX alike (and the 16 KiB limit stays on other routes).
            let huge = String(repeating: " ", count: 2 * 1_024 * 1_024 + 1)
            XCTAssertError(try await client.send(.post, "/v1/walk-logs", token: t, json: huge), 413, "body_too_large")
            XCTAssertError(try await client.sendGPX("/v1/walk-logs", token: t, gpx: huge), 413, "body_too_large")
            XCTAssertError(
                try await client.send(
                    .put,
                    "/v1/me/privacy-zones",
                    token: t,
                    json: #"{"zones": []}"# + String(repeating: " ", count: 17_000)
                ),
                413,
                "body_too_large"
            )

            XCTAssertEqual(try client.sql("SELECT count(*) FROM events")[0][0], events, "a refused upload wrote to the log")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM walk_routes")[0][0], "0")
        }
    }
}
