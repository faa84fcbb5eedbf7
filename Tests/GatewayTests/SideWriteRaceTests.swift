import Foundation
import Postgres
import XCTest

/// Sign-ups and mate requests racing through group commit: their side writes (a session row, a
/// data key, a spent drop token) are guarded statements in the batch's pipeline, so the commands
/// that break a rule leave no write of any kind, and the others commit with all of theirs.
final class SideWriteRaceTests: XCTestCase {
    func testABatchOfSignUpsAndMateRequestsCommitsOnlyTheValidOnesWithTheirSideWrites() async throws {
        try await GatewayFixture("side-write-race").run { client in
            _ = try await client.signUp("taken")
            let hosts = try await withThrowingTaskGroup(of: (Int, GatewayFixture.User).self) { group in
                for index in 0..<5 { group.addTask { (index, try await client.signUp("host\(index)")) } }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            let askers = try await withThrowingTaskGroup(of: (Int, GatewayFixture.User).self) { group in
                for index in 0..<7 { group.addTask { (index, try await client.signUp("asker\(index)")) } }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            var issued: [Int: String] = [:]
            for (index, host) in hosts {
                let reply = try await client.send(.post, "/v1/me/drop-tokens", token: host.token)
                XCTAssertEqual(reply.status, 201, reply.text)
                issued[index] = reply.json["drop_token"] as? String
            }
            let drops = issued
            // host0's token is spent before the race.
            try await Self.request(client, askers[0]!, hosts[0]!, drops[0]!, expect: 201)
            let before = try client.sql("SELECT coalesce(max(position), 0) FROM events")[0][0]!

            enum Step: Sendable {
                case signUp(String, expect: Int)
                case request(asker: Int, host: Int, token: Int, expect: Int)
                /// Two requests spend one token at once: exactly one wins.
                case contested(asker: Int)
            }
            var steps: [Step] = (0..<12).map { .signUp("fresh\($0)", expect: 201) }
            steps += (0..<3).map { _ in .signUp("taken", expect: 409) }
            steps += [
                .request(asker: 1, host: 1, token: 1, expect: 201),
                .request(asker: 2, host: 2, token: 1, expect: 403),  // host1's token shown to host2: foreign
                .request(asker: 3, host: 0, token: 0, expect: 403),  // spent before
                .request(asker: 4, host: 4, token: 4, expect: 201),
            ]
            steps.shuffle()
            @Sendable func race(_ steps: [Step]) async throws -> [(Step, Int, String?)] {
                try await withThrowingTaskGroup(of: (Step, Int, String?).self) { group in
                    for step in steps {
                        group.addTask {
                            switch step {
                            case .signUp(let nickname, _):
                                let reply = try await client.send(.post, "/v1/users", json: Self.profile(nickname))
                                return (step, reply.status, reply.code)
                            case .request(let asker, let host, let token, _):
                                let reply = try await Self.send(client, askers[asker]!, hosts[host]!, drops[token]!)
                                return (step, reply.status, reply.code)
                            case .contested(let asker):
                                let reply = try await Self.send(client, askers[asker]!, hosts[3]!, drops[3]!)
                                return (step, reply.status, reply.code)
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            // Every batch's insert waits behind this lock until the whole burst has queued in group
            // commit: however fast the machine answers, the burst then commits in a few shared
            // transactions (one per command, when nothing overlapped, proved nothing of batches).
            let holder = try Connection(connectionString: client.ownerURL)
            try holder.execute("BEGIN")
            try holder.execute("LOCK TABLE events IN SHARE MODE")
            let burst = steps
            let racing = Task { try await race(burst) }
            let waiting = "SELECT count(*) FROM pg_locks WHERE relation = 'events'::regclass AND NOT granted"
            for _ in 0..<200 {
                if try holder.execute(waiting).first!.int(0) > 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .milliseconds(500))
            try holder.execute("COMMIT")
            var outcomes = try await racing.value
            // The contested token's two requests race each other after the burst: in one batch,
            // the losing spend fails the batch's transaction and every append of it runs alone
            // (`EventLog.guardFailed`), which would leave nothing of the burst shared.
            outcomes += try await race([.contested(asker: 5), .contested(asker: 6)])
            var contestedWinners = 0
            for (step, status, code) in outcomes {
                switch step {
                case .signUp(_, let expect):
                    XCTAssertEqual(status, expect)
                    if expect == 409 { XCTAssertEqual(code, "nickname_taken") }
                case .request(_, _, _, let expect):
                    XCTAssertEqual(status, expect)
                    if expect == 403 { XCTAssertEqual(code, "invalid_drop_token") }
                case .contested:
                    XCTAssertTrue(status == 201 || (status == 403 && code == "invalid_drop_token"), "\(status) \(code ?? "")")
                    if status == 201 { contestedWinners += 1 }
                }
            }
            XCTAssertEqual(contestedWinners, 1, "one token, one request")

            // Every registered user has exactly their session and data key; nothing else has any.
            XCTAssertEqual(try client.sql("SELECT count(*) FROM events WHERE event_type = 'user_registered'")[0][0], "\(1 + 5 + 7 + 12)")
            let sessionsWithoutUser = try client.sql(
                """
                SELECT count(*) FROM sessions s
                WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.event_type = 'user_registered' AND e.stream_id = 'user-' || s.user_id)
                """
            )
            XCTAssertEqual(sessionsWithoutUser[0][0], "0", "a refused sign-up opened a session")
            let keysWithoutUser = try client.sql(
                """
                SELECT count(*) FROM data_keys k
                WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.event_type = 'user_registered' AND e.stream_id = 'user-' || k.user_id)
                """
            )
            XCTAssertEqual(keysWithoutUser[0][0], "0", "a refused sign-up left a data key")
            let usersWithout = try client.sql(
                """
                SELECT count(*) FROM events e WHERE e.event_type = 'user_registered'
                  AND (NOT EXISTS (SELECT 1 FROM sessions s WHERE e.stream_id = 'user-' || s.user_id)
                       OR NOT EXISTS (SELECT 1 FROM data_keys k WHERE e.stream_id = 'user-' || k.user_id AND k.sealed_key IS NOT NULL))
                """
            )
            XCTAssertEqual(usersWithout[0][0], "0", "a sign-up committed without its session or key")
            XCTAssertEqual(try client.sql("SELECT count(*) FROM sessions")[0][0], "\(1 + 5 + 7 + 12)")

            // Mate requests: exactly the valid ones, and a token is spent iff a request with it committed.
            let requested = Set(
                try client.sql("SELECT data->>'from', data->>'to' FROM events WHERE event_type = 'mate_requested'").map {
                    "\($0[0]!)>\($0[1]!)"
                }
            )
            let contestedWinner = askers[5]!.id + ">" + hosts[3]!.id
            let otherContender = askers[6]!.id + ">" + hosts[3]!.id
            let expected: Set<String> = [
                askers[0]!.id + ">" + hosts[0]!.id, askers[1]!.id + ">" + hosts[1]!.id, askers[4]!.id + ">" + hosts[4]!.id,
            ]
            XCTAssertEqual(requested.subtracting([contestedWinner, otherContender]), expected)
            XCTAssertEqual(requested.intersection([contestedWinner, otherContender]).count, 1)
            let spent = try client.sql(
                """
                SELECT 'host-' || (SELECT count(*) FROM events e WHERE e.event_type = 'mate_requested' AND e.data->>'to' = d.user_id::text)
                       || '-' || (d.used_at IS NOT NULL) FROM drop_tokens d ORDER BY d.user_id
                """
            )
            // Hosts 0, 1, 3 and 4 got one request each and their tokens are spent; host2's is not.
            XCTAssertEqual(spent.map { $0[0]! }.sorted(), ["host-0-false", "host-1-true", "host-1-true", "host-1-true", "host-1-true"])

            // Group commit happened: of the 15 commands that committed, the burst's shared transactions.
            let shared = try client.sql(
                "SELECT count(DISTINCT transaction_id), count(*) FROM events WHERE position > $1::bigint",
                [Int64(before)!]
            )
            XCTAssertEqual(shared[0][1], "\(12 * 2 + 2 + 1)", "12 sign-ups of two events, two requests and the contested one")
            print("SideWriteRaceTests: the 15 commands' \(shared[0][1]!) events in \(shared[0][0]!) transactions")
            XCTAssertLessThan(Int(shared[0][0]!)!, 15, "no two commands of the burst shared a transaction")
        }
    }

    static func profile(_ nickname: String) -> String {
        """
        {"nickname": "\(nickname)", "dog_name": "Bori", "age": 3, "sex": "female", "neutered": true,
         "size": "small", "keywords": ["smart"], "profile_image": null}
        """
    }

    static func send(
        _ client: GatewayFixture.Client,
        _ asker: GatewayFixture.User,
        _ host: GatewayFixture.User,
        _ drop: String
    ) async throws -> GatewayFixture.Reply {
        try await client.send(.post, "/v1/mate-requests", token: asker.token, json: #"{"to": "\#(host.id)", "drop_token": "\#(drop)"}"#)
    }

    static func request(
        _ client: GatewayFixture.Client,
        _ asker: GatewayFixture.User,
        _ host: GatewayFixture.User,
        _ drop: String,
        expect: Int
    )
        async throws
    {
        let reply = try await Self.send(client, asker, host, drop)
        XCTAssertEqual(reply.status, expect, reply.text)
    }
}
