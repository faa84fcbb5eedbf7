import Foundation
import XCTest

@testable import Domain

/// The stored JSON of every event type, pinned byte for byte. Changing one of these strings
/// means changing the log's format: bump the schema version and add an upcaster instead.
final class EventJSONGoldenTests: XCTestCase {
    static let a = "a0000000-0000-4000-8000-00000000000a"
    static let b = "b0000000-0000-4000-8000-00000000000b"
    static let r = "d0000000-0000-4000-8000-000000000001"
    static let w = "e0000000-0000-4000-8000-000000000001"
    static let at = "2027-01-15T08:00:00.000Z"
    static let l = "f0000000-0000-4000-8000-000000000001"
    static let digest = String(repeating: "0123456789abcdef", count: 4)
    static let walkLogFigures = WalkLogFigures(
        startedAt: t0,
        endedAt: t0.addingTimeInterval(3_600),
        elapsedSeconds: 3_600,
        movingSeconds: 3_100,
        distanceM: 2_034.5,
        pointCount: 3_601,
        routeDigest: digest
    )
    static let profileJSON =
        #"{"age":3,"dog_name":"Bello","keywords":["friendly","smart"],"neutered":true,"nickname":"Rex","profile_image":null,"sex":"male","size":"medium"}"#

    static let t1 = t0.addingTimeInterval(1.5)
    static let mateStep = MateRequestUpdate(requestID: request1, from: alice, to: bob, at: t0)
    static let walkStep = WalkUpdate(walkID: walk1, from: alice, to: bob, at: t0)

    /// Every event type once, with its exact JSON.
    static let goldens: [(Event, String)] = [
        (
            .userRegistered(UserRegistered(userID: alice, profile: profile(), registeredAt: t0)),
            #"{"profile":\#(profileJSON),"registered_at":"\#(at)","user_id":"\#(a)"}"#
        ),
        (
            .profileUpdated(
                ProfileUpdated(
                    userID: alice,
                    profile: profile(sex: .female, size: .small, keywords: [.shy], profileImage: "rex/1.jpg"),
                    updatedAt: t1
                )
            ),
            #"{"profile":{"age":3,"dog_name":"Bello","keywords":["shy"],"neutered":true,"nickname":"Rex","profile_image":"rex/1.jpg","sex":"female","size":"small"},"updated_at":"2027-01-15T08:00:01.500Z","user_id":"\#(a)"}"#
        ),
        (
            .deviceTokenSet(DeviceTokenSet(userID: alice, deviceToken: "00ffAA", at: t0)),
            #"{"at":"\#(at)","device_token":"00ffAA","user_id":"\#(a)"}"#
        ),
        (
            .nicknameReserved(NicknameClaim(nickname: "rex", userID: alice, at: t0)),
            #"{"at":"\#(at)","nickname":"rex","user_id":"\#(a)"}"#
        ),
        (
            .nicknameReleased(NicknameClaim(nickname: "rex", userID: alice, at: t0)),
            #"{"at":"\#(at)","nickname":"rex","user_id":"\#(a)"}"#
        ),
        (
            .mateRequested(mateStep),
            #"{"at":"\#(at)","from":"\#(a)","request_id":"\#(r)","to":"\#(b)"}"#
        ),
        (
            .mateAccepted(MateAccepted(requestID: request1, from: alice, to: bob, at: t0, mutual: true)),
            #"{"at":"\#(at)","from":"\#(a)","mutual":true,"request_id":"\#(r)","to":"\#(b)"}"#
        ),
        (
            .mateDeclined(mateStep),
            #"{"at":"\#(at)","from":"\#(a)","request_id":"\#(r)","to":"\#(b)"}"#
        ),
        (
            .mateRequestCancelled(mateStep),
            #"{"at":"\#(at)","from":"\#(a)","request_id":"\#(r)","to":"\#(b)"}"#
        ),
        (
            .matesUnpaired(MatesUnpaired(by: bob, mate: alice, at: t0)),
            #"{"at":"\#(at)","by":"\#(b)","mate":"\#(a)"}"#
        ),
        (
            .walkRequested(
                WalkRequested(
                    walkID: walk1,
                    from: alice,
                    to: bob,
                    message: "Gassi? 🐕",
                    latitude: 52.52,
                    longitude: 13.405,
                    placeName: "Tiergarten",
                    createdAt: t0,
                    expiresAt: t0.addingTimeInterval(60)
                )
            ),
            #"{"created_at":"\#(at)","expires_at":"2027-01-15T08:01:00.000Z","from":"\#(a)","latitude":52.52,"longitude":13.405,"message":"Gassi? 🐕","place_name":"Tiergarten","to":"\#(b)","walk_id":"\#(w)"}"#
        ),
        (
            .walkAccepted(walkStep),
            #"{"at":"\#(at)","from":"\#(a)","to":"\#(b)","walk_id":"\#(w)"}"#
        ),
        (
            .walkDeclined(walkStep),
            #"{"at":"\#(at)","from":"\#(a)","to":"\#(b)","walk_id":"\#(w)"}"#
        ),
        (
            .walkCancelled(walkStep),
            #"{"at":"\#(at)","from":"\#(a)","to":"\#(b)","walk_id":"\#(w)"}"#
        ),
        (
            .walkExpired(walkStep),
            #"{"at":"\#(at)","from":"\#(a)","to":"\#(b)","walk_id":"\#(w)"}"#
        ),
        (
            .notificationDismissed(NotificationDismissed(userID: alice, notificationID: walk1, at: t0)),
            #"{"at":"\#(at)","notification_id":"\#(w)","user_id":"\#(a)"}"#
        ),
        (
            .userDeleted(UserDeleted(userID: alice, at: t0)),
            #"{"at":"\#(at)","user_id":"\#(a)"}"#
        ),
        (
            .notificationsCleared(UserMoment(userID: alice, at: t0)),
            #"{"at":"\#(at)","user_id":"\#(a)"}"#
        ),
        (
            .userReported(
                UserReported(
                    reportID: request1,
                    reporter: bob,
                    reported: alice,
                    reason: .inappropriatePhoto,
                    walkID: walk1,
                    note: "rude",
                    at: t0
                )
            ),
            #"{"at":"\#(at)","note":"rude","reason":"inappropriate_photo","report_id":"\#(r)","reported":"\#(a)","reporter":"\#(b)","walk_id":"\#(w)"}"#
        ),
        (
            .reportResolved(ReportResolved(reportID: request1, reported: alice, at: t0)),
            #"{"at":"\#(at)","report_id":"\#(r)","reported":"\#(a)"}"#
        ),
        (
            .userSuspended(UserSuspended(userID: alice, reason: "spam", at: t0)),
            #"{"at":"\#(at)","reason":"spam","user_id":"\#(a)"}"#
        ),
        (
            .userUnsuspended(UserUnsuspended(userID: alice, at: t0)),
            #"{"at":"\#(at)","user_id":"\#(a)"}"#
        ),
        (
            .userBlocked(BlockUpdate(by: bob, blocked: alice, at: t0)),
            #"{"at":"\#(at)","blocked":"\#(a)","by":"\#(b)"}"#
        ),
        (
            .userUnblocked(BlockUpdate(by: bob, blocked: alice, at: t0)),
            #"{"at":"\#(at)","blocked":"\#(a)","by":"\#(b)"}"#
        ),
        (
            .walkLogged(
                WalkLogged(walkLogID: walkLog1, owner: alice, walkID: walk1, figures: walkLogFigures, visibility: .mates, createdAt: t1)
            ),
            #"{"created_at":"2027-01-15T08:00:01.500Z","distance_m":2034.5,"elapsed_seconds":3600,"ended_at":"2027-01-15T09:00:00.000Z","moving_seconds":3100,"owner":"\#(a)","point_count":3601,"route_digest":"\#(digest)","started_at":"\#(at)","visibility":"mates","walk_id":"\#(w)","walk_log_id":"\#(l)"}"#
        ),
        (
            .walkLogVisibilityChanged(WalkLogVisibilityChanged(walkLogID: walkLog1, owner: alice, visibility: .private, at: t0)),
            #"{"at":"\#(at)","owner":"\#(a)","visibility":"private","walk_log_id":"\#(l)"}"#
        ),
        (
            .walkLogDeleted(WalkLogDeleted(walkLogID: walkLog1, owner: alice, at: t0)),
            #"{"at":"\#(at)","owner":"\#(a)","walk_log_id":"\#(l)"}"#
        ),
    ]

    /// The operator's name on resolve, suspend and lift (events before operator accounts have
    /// none, above, and read as `admin`): clear, not personal.
    static let operatorGoldens: [(Event, String)] = [
        (
            .reportResolved(ReportResolved(reportID: request1, reported: alice, at: t0, operator: "mina")),
            #"{"at":"\#(at)","operator":"mina","report_id":"\#(r)","reported":"\#(a)"}"#
        ),
        (
            .userSuspended(UserSuspended(userID: alice, reason: "spam", at: t0, operator: "mina")),
            #"{"at":"\#(at)","operator":"mina","reason":"spam","user_id":"\#(a)"}"#
        ),
        (
            .userUnsuspended(UserUnsuspended(userID: alice, at: t0, operator: "mina")),
            #"{"at":"\#(at)","operator":"mina","user_id":"\#(a)"}"#
        ),
    ]

    func testOperatorNamesEncodeToTheirGoldenJSONAndRoundTrip() throws {
        for (event, json) in Self.operatorGoldens {
            XCTAssertEqual(String(decoding: event.encodedData(), as: UTF8.self), json, event.typeName)
            XCTAssertEqual(
                try Event.decode(typeName: event.typeName, schemaVersion: event.schemaVersion, data: Data(json.utf8)),
                event,
                event.typeName
            )
            let clear = try JSONSerialization.jsonObject(with: event.encodedData(.clear)) as! [String: Any]
            XCTAssertEqual(clear["operator"] as? String, "mina", event.typeName)
        }
    }

    func testEveryEventTypeHasAGolden() {
        // The chat events' goldens live beside their rules (ChatEventJSONGoldenTests).
        let chat = ChatEventJSONGoldenTests.goldens.map(\.0.typeName).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        XCTAssertEqual(Self.goldens.map(\.0.typeName) + chat, Event.typeNames)
        XCTAssertEqual(Set(Event.typeNames).count, 30)
    }

    func testEveryEventTypeEncodesToItsGoldenJSON() {
        for (event, json) in Self.goldens {
            XCTAssertEqual(String(decoding: event.encodedData(), as: UTF8.self), json, event.typeName)
        }
    }

    func testEveryEventTypeRoundTripsThroughItsJSON() throws {
        for (event, json) in Self.goldens {
            XCTAssertEqual(
                try Event.decode(typeName: event.typeName, schemaVersion: event.schemaVersion, data: Data(json.utf8)),
                event,
                event.typeName
            )
        }
    }

    /// The log's edge seals the personal part and stores the clear part: together they are the
    /// whole event, and the clear part holds none of the personal fields.
    func testTheClearAndPersonalPartsSplitTheWholeEvent() throws {
        for (event, json) in Self.goldens {
            let whole = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
            let clear = try JSONSerialization.jsonObject(with: event.encodedData(.clear)) as! [String: Any]
            let personal = try JSONSerialization.jsonObject(with: event.encodedData(.personal)) as! [String: Any]
            XCTAssertEqual(Set(clear.keys).union(personal.keys), Set(whole.keys), event.typeName)
            XCTAssertTrue(Set(clear.keys).isDisjoint(with: personal.keys), event.typeName)
            XCTAssertEqual(personal.isEmpty, event.personalDataOwner == nil, event.typeName)
            XCTAssertEqual(Event.personalTypeNames.contains(event.typeName), event.personalDataOwner != nil, event.typeName)
            for key in ["profile", "nickname", "message", "latitude", "longitude", "place_name", "device_token"] {
                XCTAssertNil(clear[key], "\(event.typeName) keeps \(key) in the clear")
            }
        }
    }

    func testEncodingIsDeterministic() {
        for (event, _) in Self.goldens {
            XCTAssertEqual(event.encodedData(), event.encodedData())
        }
    }

    func testWalkRequestedWithoutPlaceNameWritesNull() throws {
        let event = Event.walkRequested(
            WalkRequested(
                walkID: walk1,
                from: alice,
                to: bob,
                message: "Now",
                latitude: -33.8688,
                longitude: 151,
                placeName: nil,
                createdAt: t0,
                expiresAt: t0.addingTimeInterval(60)
            )
        )
        let json =
            #"{"created_at":"\#(Self.at)","expires_at":"2027-01-15T08:01:00.000Z","from":"\#(Self.a)","latitude":-33.8688,"longitude":151,"message":"Now","place_name":null,"to":"\#(Self.b)","walk_id":"\#(Self.w)"}"#
        XCTAssertEqual(String(decoding: event.encodedData(), as: UTF8.self), json)
        XCTAssertEqual(try Event.decode(typeName: "walk_requested", schemaVersion: 1, data: Data(json.utf8)), event)
    }

    func testCurrentSchemaVersionIsOneForAllTypes() {
        for (event, _) in Self.goldens { XCTAssertEqual(event.schemaVersion, 1) }
    }

    func testDecodeUnknownTypeThrows() {
        XCTAssertThrowsError(try Event.decode(typeName: "dog_barked", schemaVersion: 1, data: Data("{}".utf8))) {
            XCTAssertEqual($0 as? EventDecodingError, .unknownType("dog_barked"))
        }
    }

    func testDecodeNewerSchemaVersionThrows() {
        XCTAssertThrowsError(try Event.decode(typeName: "walk_accepted", schemaVersion: 2, data: Data("{}".utf8))) {
            XCTAssertEqual($0 as? EventDecodingError, .unsupportedSchemaVersion(typeName: "walk_accepted", version: 2))
        }
    }

    func testDecodeMalformedJSONThrows() {
        XCTAssertThrowsError(try Event.decode(typeName: "walk_accepted", schemaVersion: 1, data: Data(#"{"walk_id":"nope"}"#.utf8))) {
            guard case .malformed(let type, _)? = $0 as? EventDecodingError else { return XCTFail("\($0)") }
            XCTAssertEqual(type, "walk_accepted")
        }
    }
}
