import Foundation
import Gateway
import Postgres
import PostgresTesting
import XCTest

/// `DATABASE_READ_URL` sends the query routes to a streaming standby that applies WAL 300 ms
/// late: own writes are never read stale (`Min-Log-Position` is checked against the standby's
/// own checkpoint rows, the primary taking what the standby cannot show in time), plain reads
/// go to the standby, and a stopped standby costs no failed read.
final class ReplicaReadTests: XCTestCase {
    static let clients = 16
    static let rounds = 3
    static let plainReads = 200

    func configuration(_ cluster: ReplicatedCluster) -> GatewayConfiguration {
        var configuration = GatewayConfiguration(port: 0, databaseURL: cluster.url(cluster.primary), adminToken: "admin-secret")
        configuration.rateLimits = .off
        configuration.databaseReadURL = cluster.url(cluster.standby)
        return configuration
    }

    func testOwnWritesAreNeverReadStaleAndPlainReadsReachTheStandby() async throws {
        let cluster = try ReplicatedCluster(applyDelay: .milliseconds(300))
        defer { cluster.stop() }
        let fixture = GatewayFixture(
            configuration: configuration(cluster),
            ownerURL: cluster.url(cluster.primary, user: EmbeddedPostgres.ownerLogin)
        )
        let scansBefore = try Self.profileScans(cluster.standby, cluster)
        try await fixture.run { client in
            let stale = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<Self.clients {
                    group.addTask { try await Self.writeThenRead(client, index) }
                }
                return try await group.reduce(0, +)
            }
            XCTAssertEqual(stale, 0, "stale or failed reads of own writes")

            // Plain reads, no Min-Log-Position: the standby answers them.
            let reader = try await ReplicaReadTests.signUp(client, "reader")
            // Once the standby has replayed the profile (asked until then, up to five seconds).
            let readable = try await client.profileStatus(token: reader.token)
            XCTAssertEqual(readable, 200)
            for _ in 0..<Self.plainReads {
                let reply = try await client.send(.get, "/v1/me", token: reader.token)
                XCTAssertEqual(reply.status, 200, reply.text)
            }
        }
        // The app stopped and its standby sessions ended, which reports their statistics.
        // Sessions report as they end; wait until the count stays put.
        var scans = -1
        for _ in 0..<25 {
            try await Task.sleep(for: .milliseconds(200))
            let now = try Self.profileScans(cluster.standby, cluster) - scansBefore
            if now == scans && now >= Self.plainReads { break }
            scans = now
        }
        // At most one profile read per own-write read can have been served there besides.
        let ownWriteReads = Self.clients * (Self.rounds + 1)
        XCTAssertGreaterThanOrEqual(scans - ownWriteReads, Self.plainReads * 8 / 10, "profile reads counted on the standby: \(scans)")
    }

    func testReadsGoToThePrimaryWhenTheStandbyStops() async throws {
        let cluster = try ReplicatedCluster()
        defer { cluster.stop() }
        let fixture = GatewayFixture(
            configuration: configuration(cluster),
            ownerURL: cluster.url(cluster.primary, user: EmbeddedPostgres.ownerLogin)
        )
        try await fixture.run { client in
            let user = try await ReplicaReadTests.signUp(client, "alice")
            try cluster.waitForStandby()
            let before = try await client.profileStatus(token: user.token)
            XCTAssertEqual(before, 200)
            try cluster.standby.stop()
            let stopped = ContinuousClock.now
            var statuses: [Int] = []
            while ContinuousClock.now - stopped < .seconds(5) {
                statuses.append(try await client.send(.get, "/v1/me", token: user.token).status)
                try await Task.sleep(for: .milliseconds(50))
            }
            XCTAssertEqual(Set(statuses), [200], "\(statuses)")
        }
    }

    func testASignOutReachesAnotherReplicaReadingProcessWithinASecond() async throws {
        let cluster = try ReplicatedCluster(applyDelay: .milliseconds(300))
        defer { cluster.stop() }
        let ownerURL = cluster.url(cluster.primary, user: EmbeddedPostgres.ownerLogin)
        let first = GatewayFixture(configuration: configuration(cluster), ownerURL: ownerURL)
        let second = GatewayFixture(configuration: configuration(cluster), ownerURL: ownerURL)
        try await first.run { here in
            try await second.run { there in
                let user = try await ReplicaReadTests.signUp(here, "alice")
                // The other process knows the session (its cache holds it) and reads on its replica.
                var known = 0
                for _ in 0..<100 {
                    known = try await there.send(.get, "/v1/me", token: user.token).status
                    if known == 200 { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                XCTAssertEqual(known, 200)
                let signedOut = try await here.send(.delete, "/v1/me/session", token: user.token)
                XCTAssertEqual(signedOut.status, 204, signedOut.text)
                let start = ContinuousClock.now
                var status = 200
                while ContinuousClock.now - start < .seconds(1) {
                    status = try await there.send(.get, "/v1/me", token: user.token).status
                    if status == 401 { break }
                    try await Task.sleep(for: .milliseconds(20))
                }
                XCTAssertEqual(status, 401, "the other process still accepts a signed-out session after 1 s")
            }
        }
    }

    /// One client: signs up, then changes its dog's name `rounds` times, reading each write back
    /// with its `Min-Log-Position`. Returns how many of those reads were not the write.
    static func writeThenRead(_ client: GatewayFixture.Client, _ index: Int) async throws -> Int {
        let signedUp = try await FailoverTests.signUp(client, "rr\(index)")
        guard signedUp.status == 201, let token = signedUp.json["token"] as? String else { return rounds + 1 }
        var stale = 0
        var position = signedUp.header("Log-Position") ?? ""
        var expected = "Bori"
        for round in 0...rounds {
            let me = try await client.send(.get, "/v1/me", token: token, headers: ["Min-Log-Position": position])
            if me.status != 200 || me.json["dog_name"] as? String != expected { stale += 1 }
            guard round < rounds else { break }
            expected = "Dog\(index)x\(round)"
            let changed = try await client.send(.patch, "/v1/me", token: token, json: #"{"dog_name": "\#(expected)"}"#)
            guard changed.status == 200, let next = changed.header("Log-Position") else { return stale + rounds - round }
            position = next
        }
        return stale
    }

    static func signUp(_ client: GatewayFixture.Client, _ nickname: String) async throws -> GatewayFixture.User {
        let reply = try await FailoverTests.signUp(client, nickname)
        XCTAssertEqual(reply.status, 201, reply.text)
        return GatewayFixture.User(id: reply.json["user_id"] as? String ?? "", token: reply.json["token"] as? String ?? "")
    }

    /// Index and sequential scans of the profiles read model on `server`, as its statistics say.
    static func profileScans(_ server: EmbeddedPostgres, _ cluster: ReplicatedCluster) throws -> Int {
        try Connection(connectionString: cluster.url(server, user: EmbeddedPostgres.ownerLogin))
            .execute("SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 'profiles'")
            .first!.int(0)
    }
}
