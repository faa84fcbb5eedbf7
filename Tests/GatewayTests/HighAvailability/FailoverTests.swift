import Foundation
import Gateway
import Postgres
import PostgresTesting
import XCTest

extension GatewayFixture {
    /// A gateway on a database of the caller's (a replicated cluster) rather than a fresh one.
    init(configuration: GatewayConfiguration, ownerURL: String, background: BackgroundWork = .all) {
        self.configuration = configuration
        self.ownerURL = ownerURL
        self.background = background
    }
}

/// `DATABASE_URL` naming the primary and its standby with `target_session_attrs=read-write`:
/// when the primary dies and the standby is promoted, the running server finds it by itself.
final class FailoverTests: XCTestCase {
    func testServeReconnectsToThePromotedStandbyAnswering503Meanwhile() async throws {
        let cluster = try ReplicatedCluster()
        defer { cluster.stop() }
        var configuration = GatewayConfiguration(port: 0, databaseURL: cluster.multiHostURL(), adminToken: "admin-secret")
        configuration.rateLimits = .off
        let fixture = GatewayFixture(configuration: configuration, ownerURL: cluster.multiHostURL(user: EmbeddedPostgres.ownerLogin))
        try await fixture.run { client in
            let alice = try await Self.signUp(client, "alice")
            XCTAssertEqual(alice.status, 201, alice.text)
            let aliceToken = alice.json["token"] as? String
            let before = try await client.send(
                .get,
                "/v1/me",
                token: aliceToken,
                headers: ["Min-Log-Position": try XCTUnwrap(alice.header("Log-Position"))]
            )
            XCTAssertEqual(before.status, 200, before.text)

            try cluster.primary.kill()
            // No primary: every request is a 503 with Retry-After, never a 500.
            for nickname in ["bob1", "bob2", "bob3"] {
                let reply = try await Self.signUp(client, nickname)
                XCTAssertEqual(reply.status, 503, reply.text)
                XCTAssertEqual(reply.code, "unavailable")
                XCTAssertNotNil(reply.header("Retry-After"))
            }

            try cluster.standby.promote()
            let promoted = ContinuousClock.now
            var statuses: [Int] = []
            var written: GatewayFixture.Reply?
            while ContinuousClock.now - promoted < .seconds(15) {
                let reply = try await Self.signUp(client, "carol")
                statuses.append(reply.status)
                if reply.status == 201 {
                    written = reply
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            XCTAssertFalse(statuses.contains(500), "\(statuses)")
            XCTAssertTrue(statuses.allSatisfy { $0 == 201 || $0 == 503 }, "\(statuses)")
            let carol = try XCTUnwrap(written, "no write succeeded within 15 s of the promotion: \(statuses)")
            // The projectors own their locks on the new primary and caught up: read-your-writes holds.
            let me = try await client.send(
                .get,
                "/v1/me",
                token: carol.json["token"] as? String,
                headers: ["Min-Log-Position": try XCTUnwrap(carol.header("Log-Position"))]
            )
            XCTAssertEqual(me.status, 200, me.text)
            let after = try await client.send(.get, "/v1/me", token: aliceToken)
            XCTAssertEqual(after.status, 200, after.text)

            // LISTEN and projector ownership moved to the new primary.
            let newPrimary = try Connection(connectionString: cluster.standby.connectionString(database: cluster.database))
            var listening = 0
            var locks = 0
            for _ in 0..<100 {
                listening = try newPrimary.execute("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'").first!.int(0)
                locks = try newPrimary.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 73362244").first!
                    .int(0)
                if listening >= 3 && locks > 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            XCTAssertGreaterThanOrEqual(listening, 3, "the log, session and erasure listeners")
            XCTAssertGreaterThan(locks, 0)
        }
    }

    static func signUp(_ client: GatewayFixture.Client, _ nickname: String) async throws -> GatewayFixture.Reply {
        try await client.send(
            .post,
            "/v1/users",
            json: """
                {"nickname": "\(nickname)", "dog_name": "Bori", "age": 3, "sex": "female", "neutered": true,
                 "size": "small", "keywords": ["smart"], "profile_image": null}
                """
        )
    }
}
