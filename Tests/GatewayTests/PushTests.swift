import APNsDouble
@preconcurrency import Crypto
import Foundation
import Gateway
import Push
import XCTest

/// Push notifications through the outbox, driven end to end: the real server (projector, outbox,
/// delivery service, async-http-client over HTTP/2 and TLS) against `APNsDouble`, which checks
/// the provider token's signature and every header as APNs does.
final class PushTests: XCTestCase {
    static let topic = "app.sniffmeet.ios"
    static let keyID = "KEY1234567"
    static let teamID = "TEAM123456"

    /// A double and a fixture whose server pushes to it.
    struct Setup {
        let double: APNsDouble
        let fixture: GatewayFixture
    }

    func setUp(_ label: String, walkTTL: TimeInterval = 60) async throws -> Setup {
        let (double, key) = try await Self.startDouble()
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("apns-double-\(UUID().uuidString).pem")
        try APNsDouble.certificatePEM.write(to: ca, atomically: true, encoding: .utf8)
        var settings = APNsSettings(
            keyPEM: key.pemRepresentation,
            keyID: Self.keyID,
            teamID: Self.teamID,
            topic: Self.topic,
            baseURL: double.url,
            caFile: ca.path
        )
        settings.lease = 5
        let fixture = try GatewayFixture(label) {
            $0.apns = settings
            $0.walkTTL = walkTTL
        }
        return Setup(double: double, fixture: fixture)
    }

    /// A double expecting this app's topic, key id and team, and the key the server signs with.
    static func startDouble() async throws -> (APNsDouble, P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let double = try await APNsDouble.start(.init(topic: topic, keyID: keyID, teamID: teamID, publicKey: key.publicKey))
        return (double, key)
    }

    static func deviceToken(_ seed: Int) -> String { String(format: "%064x", seed) }

    /// Registers `token` (with `locale`) for the session of `bearer`.
    static func register(_ client: GatewayFixture.Client, _ bearer: String, _ token: String, locale: String) async throws {
        let reply = try await client.send(
            .put,
            "/v1/me/device-token",
            token: bearer,
            json: #"{"device_token": "\#(token)", "locale": "\#(locale)"}"#
        )
        XCTAssertEqual(reply.status, 204, reply.text)
    }

    /// `GET /v1/admin/push`, asked again until its figures satisfy `done` (up to ten seconds;
    /// the last answer either way).
    static func pushStatus(_ client: GatewayFixture.Client, until done: ([String: Any]) -> Bool) async throws -> GatewayFixture.Reply {
        var status = try await client.send(.get, "/v1/admin/push", token: "admin-secret")
        for _ in 0..<200 where !done(status.json) {
            try await Task.sleep(for: .milliseconds(50))
            status = try await client.send(.get, "/v1/admin/push", token: "admin-secret")
        }
        return status
    }

    /// Waits (≤ 20 s) until `condition` holds.
    static func eventually(_ what: String, _ condition: () -> Bool) async throws {
        let start = ContinuousClock.now
        while !condition() {
            guard ContinuousClock.now - start < .seconds(20) else { return XCTFail("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func testEveryCategoryReachesEveryDeviceOnceWithTheHeadersAndPayloadAPNsExpects() async throws {
        let setup = try await setUp("push_categories", walkTTL: 2)
        let double = setup.double
        try await setup.fixture.run { client in
            let ana = try await client.signUp("Ana", dog: "Bori")
            let ben = try await client.signUp("Ben", dog: "Kongsu")
            let benPhone2 = try await client.secondPhone(ben)
            let anaDevice = Self.deviceToken(0xA1)
            let benKo = Self.deviceToken(0xB1)
            let benEn = Self.deviceToken(0xB2)
            try await Self.register(client, ana.token, anaDevice, locale: "en")
            try await Self.register(client, ben.token, benKo, locale: "ko")
            try await Self.register(client, benPhone2, benEn, locale: "en")

            try await client.makeMates(ana, ben)  // Ben: mate_requested ×2; Ana: mate_accepted
            let walk1 = try await client.send(.post, "/v1/walks", token: ana.token, json: WalkRoutesTests.walk(to: ben, message: "Forest?"))
            let walk1ID = walk1.json["walk_id"] as! String
            let walk1Expires = try XCTUnwrap(walk1.json["expires_at"] as? String)
            _ = try await client.send(.post, "/v1/walks/\(walk1ID)/response", token: ben.token, json: #"{"answer": "accept"}"#)
            let walk2 = try await client.send(.post, "/v1/walks", token: ana.token, json: WalkRoutesTests.walk(to: ben))
            _ = try await client.send(
                .post,
                "/v1/walks/\(walk2.json["walk_id"] as! String)/response",
                token: ben.token,
                json: #"{"answer": "decline"}"#
            )
            _ = try await client.send(.post, "/v1/walks", token: ana.token, json: WalkRoutesTests.walk(to: ben))  // expires

            // 2 mate_requested + 1 mate_accepted + 6 walk_requested + accepted + declined + expired.
            try await Self.eventually("12 pushes") { double.deliveries.count >= 12 }
            try await Task.sleep(for: .milliseconds(500))  // and no more
            let deliveries = double.deliveries
            XCTAssertEqual(deliveries.count, 12, "\(deliveries.map { $0.json["notification"] })")
            let pairs = deliveries.map { "\($0.headers["apns-collapse-id"] ?? "")/\($0.deviceToken)" }
            XCTAssertEqual(Set(pairs).count, 12, "an entry reached a device twice")
            func categories(_ token: String) -> [String] {
                deliveries.filter { $0.deviceToken == token }
                    .compactMap { ($0.json["notification"] as? [String: Any])?["category"] as? String }.sorted()
            }
            XCTAssertEqual(categories(anaDevice), ["mate_accepted", "walk_accepted", "walk_declined", "walk_expired"])
            let bens = ["mate_requested", "walk_requested", "walk_requested", "walk_requested"]
            XCTAssertEqual(categories(benKo), bens)
            XCTAssertEqual(categories(benEn), bens)

            // The inbox ids are the collapse ids.
            let inbox = try await client.send(.get, "/v1/me/notifications", token: ben.token)
            let inboxIDs = Set(inbox.items.compactMap { $0["notification_id"] as? String })
            XCTAssertEqual(Set(deliveries.filter { $0.deviceToken == benKo }.compactMap { $0.headers["apns-collapse-id"] }), inboxIDs)
            // And each push carries the entry exactly as the inbox shows it.
            let anaInbox = try await client.send(.get, "/v1/me/notifications", token: ana.token)
            var entries: [String: NSDictionary] = [:]
            for item in inbox.items + anaInbox.items { entries[item["notification_id"] as! String] = item as NSDictionary }
            for delivery in deliveries {
                let carried = try XCTUnwrap(delivery.json["notification"] as? [String: Any])
                XCTAssertEqual(carried as NSDictionary, entries[carried["notification_id"] as? String ?? ""], "\(carried)")
            }
            for delivery in deliveries {
                XCTAssertEqual(delivery.headers["apns-topic"], Self.topic)
                XCTAssertEqual(delivery.headers["apns-push-type"], "alert")
                XCTAssertEqual(delivery.headers["apns-priority"], "10")
                XCTAssertNotNil(delivery.headers["apns-expiration"].flatMap(Int.init))
                let aps = try XCTUnwrap(delivery.json["aps"] as? [String: Any])
                XCTAssertEqual(aps["sound"] as? String, "default")
                let alert = try XCTUnwrap(aps["alert"] as? [String: Any])
                XCTAssertFalse((alert["title"] as? String ?? "").isEmpty)
                XCTAssertFalse((alert["body"] as? String ?? "").isEmpty)
                XCTAssertLessThanOrEqual(delivery.body.count, 4096)
            }
            // The walk request: its message and place, in each device's language, expiring with the walk.
            let walkPush = { (token: String) in
                deliveries.first {
                    $0.deviceToken == token && ($0.json["notification"] as? [String: Any])?["walk_id"] as? String == walk1ID
                        && ($0.json["notification"] as? [String: Any])?["category"] as? String == "walk_requested"
                }
            }
            let korean = try XCTUnwrap(walkPush(benKo))
            let english = try XCTUnwrap(walkPush(benEn))
            let koAlert = (korean.json["aps"] as? [String: Any])?["alert"] as? [String: Any]
            let enAlert = (english.json["aps"] as? [String: Any])?["alert"] as? [String: Any]
            XCTAssertEqual(koAlert?["title"] as? String, "Bori의 산책 요청")
            XCTAssertEqual(enAlert?["title"] as? String, "Walk with Bori?")
            XCTAssertEqual(enAlert?["body"] as? String, "Forest? · Seoul Forest")
            let entry = try XCTUnwrap(english.json["notification"] as? [String: Any])
            XCTAssertEqual(entry["message"] as? String, "Forest?")
            XCTAssertEqual((entry["from"] as? [String: Any])?["dog_name"] as? String, "Bori")
            let expires = ISO8601DateFormatter.withFractionalSeconds.date(from: walk1Expires)!
            XCTAssertEqual(english.headers["apns-expiration"], String(Int(expires.timeIntervalSince1970)))

            // Outcomes are recorded once APNs has answered: a moment after the double counted them.
            let status = try await Self.pushStatus(client) { $0["delivered"] as? Int == 12 }
            XCTAssertEqual(status.status, 200, status.text)
            XCTAssertEqual(status.json["delivered"] as? Int, 12)
            XCTAssertEqual(status.json["configured"] as? Bool, true)
            XCTAssertError(try await client.send(.get, "/v1/admin/push", token: ana.token), 401, "unauthorized")
        }
        try await double.stop()
    }

    func testDeadTokensAreDroppedRetriesGoThroughAndAnExpiredProviderTokenIsRenewed() async throws {
        let setup = try await setUp("push_answers")
        let double = setup.double
        try await setup.fixture.run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben")
            let anaDevice = Self.deviceToken(0xA1)
            let benDevice = Self.deviceToken(0xB1)
            try await Self.register(client, ana.token, anaDevice, locale: "ko")
            try await Self.register(client, ben.token, benDevice, locale: "ko")
            double.answerAlways(benDevice, .unregistered)
            double.script(anaDevice, [.tooManyRequests, .serviceUnavailable])
            try await client.makeMates(ana, ben)  // Ben's mate_requested: 410; Ana's mate_accepted: 429, 503, 200

            try await Self.eventually("the dead token dropped") { double.statuses[410] == 1 }
            try await Self.eventually("the retried push delivered") { double.deliveries.contains { $0.deviceToken == anaDevice } }
            XCTAssertEqual(double.statuses[429], 1)
            XCTAssertEqual(double.statuses[503], 1)
            var sessions = try await client.send(.get, "/v1/me/sessions", token: ben.token)
            for _ in 0..<40 where sessions.items.first?["push"] as? Bool != false {
                try await Task.sleep(for: .milliseconds(50))
                sessions = try await client.send(.get, "/v1/me/sessions", token: ben.token)
            }
            XCTAssertEqual(sessions.items.first?["push"] as? Bool, false, "410 did not drop the device token")

            // Later entries are not sent to the dropped token; an expired provider token is renewed.
            double.expireCurrentProviderToken()
            let walk = try await client.send(.post, "/v1/walks", token: ben.token, json: WalkRoutesTests.walk(to: ana))
            XCTAssertEqual(walk.status, 201)
            _ = try await client.send(.post, "/v1/walks", token: ana.token, json: WalkRoutesTests.walk(to: ben))
            try await Self.eventually("the walk pushed with a new provider token") {
                double.deliveries.filter { $0.deviceToken == anaDevice }.count == 2
            }
            let status = try await Self.pushStatus(client) { $0["failed"] as? Int == 1 && $0["delivered"] as? Int == 2 }
            XCTAssertEqual(double.statuses[410], 1, "a push went to the dropped token")
            XCTAssertTrue(double.refusals.contains("ExpiredProviderToken"))
            XCTAssertGreaterThanOrEqual(double.providerTokenCount, 2)
            XCTAssertEqual(status.json["failed"] as? Int, 1, status.text)
            // Ana's walk to Ben was not even enqueued: Ben's session has no device any more.
            XCTAssertEqual(status.json["dropped"] as? Int, 0, status.text)
            XCTAssertEqual(status.json["delivered"] as? Int, 2, status.text)
        }
        try await double.stop()
    }

    func testAPushUnansweredPastItsDeadlineIsGivenUpAndSentAgainLater() async throws {
        let setup = try await setUp("push_timeout")
        let double = setup.double
        try await setup.fixture.run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben")
            let benDevice = Self.deviceToken(0xB1)
            try await Self.register(client, ben.token, benDevice, locale: "en")
            // The lease is 5 s, so a batch waits 3.5 s for its answers; this APNs takes 8.
            double.answerAfter(.seconds(8))
            try await client.makeMates(ana, ben)  // Ben's mate_requested

            var status = try await Self.pushStatus(client) { $0["retrying"] as? Int == 1 }
            XCTAssertEqual(status.json["retrying"] as? Int, 1, "the unanswered push was not given up at its deadline: \(status.text)")
            let reasons = (status.json["failure_reasons"] as? [[String: Any]])?.compactMap { $0["reason"] as? String }
            XCTAssertEqual(reasons, ["timeout"], status.text)

            // APNs answers promptly again: the retry goes through.
            double.answerAfter(.zero)
            try await Self.eventually("the retried push answered") { double.deliveries.contains { $0.deviceToken == benDevice } }
            status = try await Self.pushStatus(client) { $0["delivered"] as? Int == 1 }
            XCTAssertEqual(status.json["delivered"] as? Int, 1, status.text)
            XCTAssertEqual(status.json["retrying"] as? Int, 0, status.text)
        }
        try await double.stop()
    }

    func testASignedOutDeviceGetsNothingAndADeletedAccountsPendingPushesAreDropped() async throws {
        let setup = try await setUp("push_gone")
        let double = setup.double
        try await setup.fixture.run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben")
            let cy = try await client.signUp("Cy")
            let benPhone2 = try await client.secondPhone(ben)
            let benDevice = Self.deviceToken(0xB1)
            let benGone = Self.deviceToken(0xB2)
            let cyDevice = Self.deviceToken(0xC1)
            try await Self.register(client, ben.token, benDevice, locale: "en")
            try await Self.register(client, benPhone2, benGone, locale: "en")
            try await Self.register(client, cy.token, cyDevice, locale: "en")
            try await client.makeMates(ana, ben)
            try await client.makeMates(ana, cy)
            try await Self.eventually("the mate pushes") { double.deliveries.count == 3 }
            double.reset()

            // Ben signs his second phone out: only the first gets the walk.
            let awaited1 = try await client.send(.delete, "/v1/me/session", token: benPhone2).status
            XCTAssertEqual(awaited1, 204)
            _ = try await client.send(.post, "/v1/walks", token: ana.token, json: WalkRoutesTests.walk(to: ben))
            try await Self.eventually("Ben's walk push") { double.deliveries.count == 1 }

            // Cy's device is down; Cy deletes the account while the push waits: it is never sent.
            double.script(cyDevice, Array(repeating: .serviceUnavailable, count: 3))
            _ = try await client.send(.post, "/v1/walks", token: ana.token, json: WalkRoutesTests.walk(to: cy))
            try await Self.eventually("a first attempt at Cy's device") { double.statuses[503] ?? 0 >= 1 }
            let awaited2 = try await client.send(.delete, "/v1/me", token: cy.token).status
            XCTAssertEqual(awaited2, 204)
            try await Task.sleep(for: .seconds(5))
            XCTAssertEqual(double.deliveries.map(\.deviceToken), [benDevice], "a push went to a signed-out or deleted device")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM push_outbox WHERE user_id = $1", [UUID(uuidString: cy.id)!])[0][0], "0")
        }
        try await double.stop()
    }
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let withFractionalSeconds: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}
