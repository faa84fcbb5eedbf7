import Foundation
import WalkRoutes
import XCTest

/// Every walk log route's success and error answers.
final class WalkLogRoutesTests: XCTestCase {
    func testRecordReadListPatchDelete() async throws {
        try await GatewayFixture("walk_log_routes").run { client in
            let owner = try await client.signUp("owner")
            let mate = try await client.signUp("mate")
            let stranger = try await client.signUp("stranger")
            try await client.makeMates(owner, mate)

            XCTAssertError(
                try await client.send(.post, "/v1/walk-logs", json: WalkLogFixtures.json(WalkLogFixtures.loop())),
                401,
                "unauthorized"
            )
            let recorded = try await client.record(owner)
            let id = try XCTUnwrap(recorded.json["walk_log_id"] as? String)
            XCTAssertNotNil(recorded.header("Log-Position"))
            XCTAssertEqual((recorded.json["owner"] as? [String: Any])?["user_id"] as? String, owner.id)
            XCTAssertTrue(recorded.json["walk_id"] is NSNull)
            XCTAssertEqual(recorded.json["visibility"] as? String, "mates")
            XCTAssertEqual(recorded.json["started_at"] as? String, "2025-11-25T10:00:00.000Z")
            XCTAssertEqual(recorded.json["elapsed_seconds"] as? Int, 2_142)
            XCTAssertEqual(recorded.json["moving_seconds"] as? Int, 2_142)
            XCTAssertEqual(try XCTUnwrap(recorded.json["distance_m"] as? Double), 3_000, accuracy: 3)
            let route = try XCTUnwrap(Polyline.decode(try XCTUnwrap(recorded.json["route"] as? String)))
            XCTAssertGreaterThan(route.count, 20)
            XCTAssertEqual(Geodesic.distance(from: route[0], to: WalkLogFixtures.home), 0, accuracy: 1.5, "the owner sees the whole route")
            let bounds = try XCTUnwrap(recorded.json["bounds"] as? [String: Double])
            XCTAssertEqual(try XCTUnwrap(bounds["south"]), WalkLogFixtures.home.latitude, accuracy: 1e-4)
            let position = recorded.header("Log-Position")!
            let fresh = ["Min-Log-Position": position]

            // Reading: the owner and a mate; a stranger gets 404.
            let mine = try await client.send(.get, "/v1/walk-logs/\(id)", token: owner.token, headers: fresh)
            XCTAssertEqual(mine.status, 200, mine.text)
            XCTAssertEqual(mine.json["route"] as? String, recorded.json["route"] as? String)
            let matesView = try await client.send(.get, "/v1/walk-logs/\(id)", token: mate.token, headers: fresh)
            XCTAssertEqual(matesView.status, 200, matesView.text)
            XCTAssertNotEqual(matesView.json["route"] as? String, recorded.json["route"] as? String, "a mate sees the ends cut")
            XCTAssertEqual(matesView.json["distance_m"] as? Double, recorded.json["distance_m"] as? Double)
            XCTAssertError(try await client.send(.get, "/v1/walk-logs/\(id)", token: stranger.token, headers: fresh), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/walk-logs/\(UUID())", token: owner.token), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/walk-logs/not-a-uuid", token: owner.token), 404, "not_found")

            // Lists.
            let list = try await client.send(.get, "/v1/me/walk-logs", token: owner.token, headers: fresh)
            XCTAssertEqual(list.status, 200, list.text)
            XCTAssertEqual(list.items.map { $0["walk_log_id"] as? String }, [id])
            XCTAssertTrue(list.json["next_cursor"] is NSNull)
            let matesList = try await client.send(.get, "/v1/users/\(owner.id)/walk-logs", token: mate.token, headers: fresh)
            XCTAssertEqual(matesList.items.map { $0["walk_log_id"] as? String }, [id], matesList.text)
            XCTAssertError(try await client.send(.get, "/v1/users/\(owner.id)/walk-logs", token: stranger.token), 404, "not_found")
            XCTAssertError(
                try await client.send(.get, "/v1/me/walk-logs?limit=0", token: owner.token),
                400,
                "validation_failed",
                field: "limit"
            )
            let second = try await client.record(owner, WalkLogFixtures.loop(time: WalkLogFixtures.start + 86_400))
            let page1 = try await client.send(
                .get,
                "/v1/me/walk-logs?limit=1",
                token: owner.token,
                headers: ["Min-Log-Position": second.header("Log-Position")!]
            )
            XCTAssertEqual(page1.items.map { $0["walk_log_id"] as? String }, [second.json["walk_log_id"] as? String])
            let cursor = try XCTUnwrap(page1.json["next_cursor"] as? String)
            let page2 = try await client.send(.get, "/v1/me/walk-logs?limit=1&cursor=\(cursor)", token: owner.token)
            XCTAssertEqual(page2.items.map { $0["walk_log_id"] as? String }, [id])

            // Visibility.
            XCTAssertError(
                try await client.send(.patch, "/v1/walk-logs/\(id)", token: owner.token, json: #"{"visibility": "everyone"}"#),
                400,
                "validation_failed",
                field: "visibility"
            )
            XCTAssertError(
                try await client.send(.patch, "/v1/walk-logs/\(id)", token: mate.token, json: #"{"visibility": "private"}"#),
                404,
                "not_found"
            )
            let hidden = try await client.send(.patch, "/v1/walk-logs/\(id)", token: owner.token, json: #"{"visibility": "private"}"#)
            XCTAssertEqual(hidden.status, 200, hidden.text)
            XCTAssertEqual(hidden.json["visibility"] as? String, "private")
            XCTAssertEqual(hidden.json["route"] as? String, recorded.json["route"] as? String)
            let afterHiding = ["Min-Log-Position": hidden.header("Log-Position")!]
            XCTAssertError(try await client.send(.get, "/v1/walk-logs/\(id)", token: mate.token, headers: afterHiding), 404, "not_found")
            let matesListNow = try await client.send(.get, "/v1/users/\(owner.id)/walk-logs", token: mate.token, headers: afterHiding)
            XCTAssertFalse(matesListNow.text.contains(id))

            // GPX export: the owner's only.
            let gpx = try await client.send(.get, "/v1/walk-logs/\(id)/gpx", token: owner.token)
            XCTAssertEqual(gpx.status, 200)
            XCTAssertEqual(gpx.header("Content-Type"), "application/gpx+xml")
            let exported = try GPX.parse(Array(gpx.body))
            XCTAssertEqual(exported.count, WalkLogFixtures.loop().count)
            XCTAssertEqual(exported.first?.time, WalkLogFixtures.start)
            XCTAssertError(try await client.send(.get, "/v1/walk-logs/\(id)/gpx", token: mate.token), 404, "not_found")

            // Delete: the owner's only, once.
            XCTAssertError(try await client.send(.delete, "/v1/walk-logs/\(id)", token: mate.token), 404, "not_found")
            let deleted = try await client.send(.delete, "/v1/walk-logs/\(id)", token: owner.token)
            XCTAssertEqual(deleted.status, 204, deleted.text)
            let afterDeleting = ["Min-Log-Position": deleted.header("Log-Position")!]
            XCTAssertError(try await client.send(.get, "/v1/walk-logs/\(id)", token: owner.token, headers: afterDeleting), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/walk-logs/\(id)/gpx", token: owner.token), 404, "not_found")
            XCTAssertError(try await client.send(.delete, "/v1/walk-logs/\(id)", token: owner.token), 404, "not_found")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM walk_routes WHERE walk_log_id = $1", [UUID(uuidString: id)!])[0][0], "0")
        }
    }

    func testGPXUploadAndWalkTiedToAnAcceptedWalk() async throws {
        try await GatewayFixture("walk_log_gpx").run { client in
            let owner = try await client.signUp("owner")
            let mate = try await client.signUp("mate")
            try await client.makeMates(owner, mate)
            let walk = try await client.send(.post, "/v1/walks", token: owner.token, json: WalkRoutesTests.walk(to: mate))
            let walkID = try XCTUnwrap(walk.json["walk_id"] as? String)
            let points = WalkLogFixtures.loop()
            let gpx = GPX.write(points, name: "Morning")

            // Not yet accepted: refused, nothing stored.
            XCTAssertError(
                try await client.sendGPX("/v1/walk-logs?walk_id=\(walkID)", token: mate.token, gpx: gpx),
                400,
                "validation_failed",
                field: "walk_id"
            )
            let accepted = try await client.send(.post, "/v1/walks/\(walkID)/response", token: mate.token, json: #"{"answer": "accept"}"#)
            XCTAssertEqual(accepted.status, 200)
            let recorded = try await client.sendGPX("/v1/walk-logs?walk_id=\(walkID)&visibility=mates", token: mate.token, gpx: gpx)
            XCTAssertEqual(recorded.status, 201, recorded.text)
            XCTAssertEqual(recorded.json["walk_id"] as? String, walkID)
            // The other walker of the walk still sees the log once they are no longer mates.
            let unpaired = try await client.send(.delete, "/v1/me/mates/\(mate.id)", token: owner.token)
            XCTAssertEqual(unpaired.status, 204, unpaired.text)
            let walkersView = try await client.send(
                .get,
                "/v1/walk-logs/\(recorded.json["walk_log_id"] as! String)",
                token: owner.token,
                headers: ["Min-Log-Position": unpaired.header("Log-Position")!]
            )
            XCTAssertEqual(walkersView.status, 200, walkersView.text)
            XCTAssertError(try await client.send(.get, "/v1/users/\(mate.id)/walk-logs", token: owner.token), 404, "not_found")
            XCTAssertEqual(try XCTUnwrap(recorded.json["distance_m"] as? Double), 3_000, accuracy: 3)
            // Someone else's walk, or no walk at all.
            let outsider = try await client.signUp("outsider")
            XCTAssertError(
                try await client.sendGPX("/v1/walk-logs?walk_id=\(walkID)", token: outsider.token, gpx: gpx),
                400,
                "validation_failed",
                field: "walk_id"
            )
            XCTAssertError(
                try await client.sendGPX("/v1/walk-logs?walk_id=nope", token: owner.token, gpx: gpx),
                400,
                "validation_failed",
                field: "walk_id"
            )
            XCTAssertError(
                try await client.sendGPX("/v1/walk-logs?visibility=public", token: owner.token, gpx: gpx),
                400,
                "validation_failed",
                field: "visibility"
            )
            // The same upload under one Idempotency-Key records once.
            let key = ["Idempotency-Key": "walk-1"]
            let first = try await client.sendGPX("/v1/walk-logs", token: owner.token, gpx: gpx, headers: key)
            let again = try await client.sendGPX("/v1/walk-logs", token: owner.token, gpx: gpx, headers: key)
            XCTAssertEqual(first.status, 201, first.text)
            XCTAssertEqual(again.json["walk_log_id"] as? String, first.json["walk_log_id"] as? String)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM walk_routes WHERE owner = $1", [UUID(uuidString: owner.id)!])[0][0], "1")
        }
    }

    func testPrivacyZonesAndStats() async throws {
        try await GatewayFixture("walk_log_zones").run { client in
            let owner = try await client.signUp("owner")
            let empty = try await client.send(.get, "/v1/me/privacy-zones", token: owner.token)
            XCTAssertEqual(empty.status, 200)
            XCTAssertEqual((empty.json["zones"] as? [Any])?.count, 0)
            let zones =
                #"{"zones": [{"latitude": 37.5665, "longitude": 126.978, "radius_m": 300}, {"latitude": 0, "longitude": 0, "radius_m": 1600}]}"#
            let put = try await client.send(.put, "/v1/me/privacy-zones", token: owner.token, json: zones)
            XCTAssertEqual(put.status, 200, put.text)
            let got = try await client.send(.get, "/v1/me/privacy-zones", token: owner.token)
            let list = try XCTUnwrap(got.json["zones"] as? [[String: Double]])
            XCTAssertEqual(list.count, 2)
            XCTAssertEqual(list[0]["latitude"], 37.5665)
            XCTAssertEqual(list[0]["radius_m"], 300)
            let again = try await client.send(.put, "/v1/me/privacy-zones", token: owner.token, json: zones)
            XCTAssertEqual(again.status, 200)
            for (body, field) in [
                (#"{"zones": [{"latitude": 1, "longitude": 1, "radius_m": 199}]}"#, "radius_m"),
                (#"{"zones": [{"latitude": 1, "longitude": 1, "radius_m": 1601}]}"#, "radius_m"),
                (#"{"zones": [{"latitude": 91, "longitude": 1, "radius_m": 300}]}"#, "latitude"),
                (
                    #"{"zones": [\#(Array(repeating: #"{"latitude": 1, "longitude": 1, "radius_m": 300}"#, count: 4).joined(separator: ","))]}"#,
                    "zones"
                ),
                (#"{"zones": 3}"#, "zones"),
            ] {
                XCTAssertError(
                    try await client.send(.put, "/v1/me/privacy-zones", token: owner.token, json: body),
                    400,
                    "validation_failed",
                    field: field
                )
            }
            let cleared = try await client.send(.put, "/v1/me/privacy-zones", token: owner.token, json: #"{"zones": []}"#)
            XCTAssertEqual(cleared.status, 200)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM privacy_zones")[0][0], "0")

            // Stats: a recent walk counts this week and month, in any zone. An hour ago, unless
            // a week or month began since in one of the zones: then a minute after the latest
            // such start (a walk an hour ago would be last week's there).
            let starts = try client.sql(
                """
                SELECT extract(epoch FROM max(start)) FROM unnest(ARRAY['Asia/Seoul', 'America/Los_Angeles', 'UTC']) AS zone,
                    LATERAL (VALUES (date_trunc('week', now() AT TIME ZONE zone) AT TIME ZONE zone),
                                    (date_trunc('month', now() AT TIME ZONE zone) AT TIME ZONE zone)) AS s(start)
                """
            )
            let latestStart = try XCTUnwrap(Double(try XCTUnwrap(starts[0][0])))
            let walked = max(Date().timeIntervalSince1970 - 3_600, latestStart + 60)
            let recorded = try await client.record(owner, WalkLogFixtures.loop(time: walked))
            let fresh = ["Min-Log-Position": recorded.header("Log-Position")!]
            for tz in ["Asia/Seoul", "America/Los_Angeles", "UTC"] {
                let stats = try await client.send(.get, "/v1/me/walk-stats?tz=\(tz)", token: owner.token, headers: fresh)
                XCTAssertEqual(stats.status, 200, stats.text)
                XCTAssertEqual(stats.json["time_zone"] as? String, tz)
                let week = try XCTUnwrap(stats.json["this_week"] as? [String: Any])
                XCTAssertEqual(week["walks"] as? Int, 1)
                XCTAssertEqual(try XCTUnwrap(week["distance_m"] as? Double), 3_000, accuracy: 3)
                XCTAssertEqual((stats.json["this_month"] as? [String: Any])?["walks"] as? Int, 1)
                let weeks = try XCTUnwrap(stats.json["weeks"] as? [[String: Any]])
                XCTAssertEqual(weeks.count, 12)
                XCTAssertEqual(weeks.compactMap { $0["walks"] as? Int }.reduce(0, +), 1)
                XCTAssertEqual(weeks[0]["week_start"] as? String, week["week_start"] as? String)
            }
            let defaulted = try await client.send(.get, "/v1/me/walk-stats", token: owner.token)
            XCTAssertEqual(defaulted.json["time_zone"] as? String, "UTC")
            XCTAssertError(
                try await client.send(.get, "/v1/me/walk-stats?tz=Mars/Olympus", token: owner.token),
                400,
                "validation_failed",
                field: "tz"
            )
            XCTAssertError(
                try await client.send(.get, "/v1/me/walk-stats?tz=%27%3B", token: owner.token),
                400,
                "validation_failed",
                field: "tz"
            )
        }
    }

    /// ISO weeks in the request's zone: a walk at 00:30 on Monday in Seoul is in that week in
    /// Seoul, and in the week before in UTC (where it is still Sunday).
    func testWeeksFollowTheRequestedTimeZone() async throws {
        try await GatewayFixture("walk_log_weeks").run { client in
            let owner = try await client.signUp("owner")
            // The Monday 00:30 in Seoul of this week is Sunday 15:30 UTC of the week before.
            let rows = try client.sql(
                "SELECT extract(epoch FROM (date_trunc('week', now() AT TIME ZONE 'Asia/Seoul') + interval '30 minutes') AT TIME ZONE 'Asia/Seoul')"
            )
            let mondayInSeoul = try XCTUnwrap(Double(try XCTUnwrap(rows[0][0])))
            let recorded = try await client.record(owner, WalkLogFixtures.loop(circumference: 500, time: mondayInSeoul))
            let fresh = ["Min-Log-Position": recorded.header("Log-Position")!]
            let seoul = try await client.send(.get, "/v1/me/walk-stats?tz=Asia/Seoul", token: owner.token, headers: fresh)
            XCTAssertEqual((seoul.json["this_week"] as? [String: Any])?["walks"] as? Int, 1, seoul.text)
            let seoulWeek = try XCTUnwrap((seoul.json["this_week"] as? [String: Any])?["week_start"] as? String)
            let utc = try await client.send(.get, "/v1/me/walk-stats?tz=UTC", token: owner.token, headers: fresh)
            let utcWeeks = try XCTUnwrap(utc.json["weeks"] as? [[String: Any]])
            let counted = utcWeeks.filter { $0["walks"] as? Int == 1 }
            XCTAssertEqual(counted.count, 1, utc.text)
            let mondayBefore = try XCTUnwrap(RFC3339.parse(Array("\(seoulWeek)T00:00:00Z".utf8))) - 7 * 86_400
            XCTAssertEqual(counted.first?["week_start"] as? String, String(RFC3339.format(mondayBefore).prefix(10)))
        }
    }
}
