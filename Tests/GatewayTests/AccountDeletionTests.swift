import Foundation
import PersonalData
import Postgres
import Projections
import XCTest

/// `DELETE /v1/me` (API.md, "Deleting an account"): the account goes at once, everything that
/// names it leaves every other user's lists, and nothing it wrote stays readable anywhere in the
/// database, the log included, while everyone else's data stays as it was.
final class AccountDeletionTests: XCTestCase {
    static let deviceToken = "a1b2c3d4e5f60718" + String(repeating: "9f8e7d6c", count: 6)

    func testADeletedAccountLeavesNothingReadableInTheDatabaseAndOthersKeepTheirs() async throws {
        let fixture = try GatewayFixture("account_deletion")
        let sealer = EventSealer(secret: fixture.configuration.secret)
        try await fixture.run { client in
            let ana = try await client.signUp("Zqvxana", dog: "Wufflebert")
            let ben = try await client.signUp("Benji", dog: "Kongsu")
            let cy = try await client.signUp("Cyra", dog: "Dubudu")
            try await client.makeMates(ana, ben)
            try await client.makeMates(ben, cy)
            let anasWalk = try await client.send(
                .post,
                "/v1/walks",
                token: ana.token,
                json:
                    #"{"to": "\#(ben.id)", "message": "Meet at Quokka Pond xq7", "latitude": 37.123457, "longitude": 127.654321, "place_name": "Quokkapond Gate"}"#
            )
            XCTAssertEqual(anasWalk.status, 201, anasWalk.text)
            let bensToAna = try await client.send(
                .post,
                "/v1/walks",
                token: ben.token,
                json: #"{"to": "\#(ana.id)", "message": "Ben asks Ana", "latitude": 1.5, "longitude": 2.5}"#
            )
            XCTAssertEqual(bensToAna.status, 201, bensToAna.text)
            let bensToCy = try await client.send(
                .post,
                "/v1/walks",
                token: ben.token,
                json:
                    #"{"to": "\#(cy.id)", "message": "Ben to Cy at Hangang", "latitude": 37.52, "longitude": 126.93, "place_name": "Hangang Park"}"#
            )
            XCTAssertEqual(bensToCy.status, 201, bensToCy.text)
            let device = try await client.send(
                .put,
                "/v1/me/device-token",
                token: ana.token,
                json: #"{"device_token": "\#(Self.deviceToken)"}"#
            )
            XCTAssertEqual(device.status, 204, device.text)
            // A pending mate request from Cy to Ana, with a drop token Ana handed over.
            let drop = try await client.send(.post, "/v1/me/drop-tokens", token: ana.token)
            let pending = try await client.send(
                .post,
                "/v1/mate-requests",
                token: cy.token,
                json: #"{"to": "\#(ana.id)", "drop_token": "\#(drop.json["drop_token"] as! String)"}"#
            )
            XCTAssertEqual(pending.status, 201, pending.text)

            let deleted = try await client.send(.delete, "/v1/me", token: ana.token)
            XCTAssertEqual(deleted.status, 204, deleted.text)
            let position = try XCTUnwrap(deleted.header("Log-Position"))
            XCTAssertError(try await client.send(.get, "/v1/me", token: ana.token), 401, "unauthorized")
            XCTAssertError(try await client.send(.delete, "/v1/me", token: ana.token), 401, "unauthorized")

            // Nothing names Ana any more in the others' lists.
            let seen = ["Min-Log-Position": position]
            let bensMates = try await client.send(.get, "/v1/me/mates", token: ben.token, headers: seen)
            XCTAssertEqual(bensMates.items.map { $0["user_id"] as? String }, [cy.id], bensMates.text)
            let bensWalks = try await client.send(.get, "/v1/me/walks", token: ben.token, headers: seen)
            XCTAssertEqual(bensWalks.items.map { $0["walk_id"] as? String }, [bensToCy.json["walk_id"] as? String], bensWalks.text)
            XCTAssertEqual(bensWalks.items.first?["message"] as? String, "Ben to Cy at Hangang")
            let bensInbox = try await client.send(.get, "/v1/me/notifications", token: ben.token, headers: seen)
            XCTAssertFalse(bensInbox.text.contains(ana.id), bensInbox.text)
            let cysRequests = try await client.send(.get, "/v1/me/mate-requests", token: cy.token, headers: seen)
            XCTAssertFalse(cysRequests.text.contains(ana.id), cysRequests.text)
            XCTAssertError(try await client.send(.get, "/v1/users/\(ana.id)", token: ben.token, headers: seen), 404, "not_found")
            XCTAssertError(
                try await client.send(.get, "/v1/walks/\(anasWalk.json["walk_id"] as! String)", token: ben.token, headers: seen),
                404,
                "not_found"
            )
            let cysCard = try await client.send(.get, "/v1/users/\(cy.id)", token: ben.token, headers: seen)
            XCTAssertEqual(cysCard.json["dog_name"] as? String, "Dubudu", cysCard.text)
            // The nickname is free again.
            _ = try await client.signUp("ZQVXANA", dog: "Another")

            // The whole database, the log included.
            let dump = try Self.dump(client.ownerURL)
            for text in [
                "Zqvxana", "zqvxana", "Wufflebert", "Quokka Pond xq7", "Quokkapond Gate", "37.123457", "127.654321",
                Self.deviceToken,
            ] {
                XCTAssertFalse(dump.contains(text), "the dump still holds \(text)")
            }
            // The others' data is still there (the dump is not simply empty).
            for text in ["Kongsu", "Dubudu", "Ben to Cy at Hangang", "Hangang Park"] {
                XCTAssertTrue(dump.contains(text), "the dump lost \(text)")
            }

            // verify, and a full rebuild gives the same read models.
            let runtime = client.runtimeURL
            let reports = try Verifier(connectionString: runtime, sealer: sealer).run()
            XCTAssertFalse(reports.isEmpty)
            for report in reports { XCTAssertEqual(report.differingRows, 0, "\(report.table): \(report.samples)") }
            let owner = client.ownerURL
            let before = try ReadModelChecksum.compute(on: Connection(connectionString: owner))
            let outcome = try await RebuildJob(connectionString: owner, sealer: sealer).run(onThread: { false }, progress: { _ in })
            guard case .swapped = outcome else { return XCTFail("rebuild: \(outcome)") }
            XCTAssertEqual(try ReadModelChecksum.compute(on: Connection(connectionString: owner)), before)
            let rebuiltWalks = try await client.send(.get, "/v1/me/walks", token: ben.token)
            XCTAssertEqual(rebuiltWalks.items.map { $0["walk_id"] as? String }, [bensToCy.json["walk_id"] as? String])
        }
    }

    func testDeletingTwiceOrWithoutATokenIsUnauthorized() async throws {
        try await GatewayFixture("account_deletion_auth").run { client in
            XCTAssertError(try await client.send(.delete, "/v1/me"), 401, "unauthorized")
            let ana = try await client.signUp("Anabel")
            let deleted = try await client.send(.delete, "/v1/me", token: ana.token)
            XCTAssertEqual(deleted.status, 204, deleted.text)
            XCTAssertError(try await client.send(.delete, "/v1/me", token: ana.token), 401, "unauthorized")
        }
    }

    /// An `Idempotency-Key` used again after its stored answer is no longer kept (24 hours,
    /// moved back here) derives the command id of the earlier command: its replay is no
    /// deletion, so the answer is `422`, never a `204` with the account still there.
    func testAKeyOfAnotherCommandWhoseAnswerIsGoneDeletesNothingAndSaysSo() async throws {
        try await GatewayFixture("account_deletion_old_key").run { client in
            let ana = try await client.signUp("Anabel")
            let key = ["Idempotency-Key": "ana-1"]
            let changed = try await client.send(.patch, "/v1/me", token: ana.token, json: #"{"dog_name": "Bo"}"#, headers: key)
            XCTAssertEqual(changed.status, 200, changed.text)
            _ = try client.sql("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'")
            XCTAssertError(try await client.send(.delete, "/v1/me", token: ana.token, headers: key), 422, "idempotency_key_reused")
            let me = try await client.send(.get, "/v1/me", token: ana.token)
            XCTAssertEqual(me.json["dog_name"] as? String, "Bo", me.text)
            let deleted = try await client.send(.delete, "/v1/me", token: ana.token, headers: ["Idempotency-Key": "ana-2"])
            XCTAssertEqual(deleted.status, 204, deleted.text)
        }
    }

    /// The deletion's own answer is not stored under its `Idempotency-Key`: the account's stored
    /// answers go with it (API.md), and the one given after its commit must not stay behind
    /// (nobody could ask for it again: the sessions are gone too).
    func testTheDeletionsAnswerIsNotStoredUnderItsKey() async throws {
        try await GatewayFixture("account_deletion_answer").run { client in
            let ana = try await client.signUp("Anouk")
            let scope = UUID(uuidString: ana.id)!
            let changed = try await client.send(
                .patch,
                "/v1/me",
                token: ana.token,
                json: #"{"dog_name": "Bo"}"#,
                headers: ["Idempotency-Key": "anouk-1"]
            )
            XCTAssertEqual(changed.status, 200, changed.text)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM idempotency_keys WHERE scope = $1", [scope])[0][0], "1")
            let deleted = try await client.send(.delete, "/v1/me", token: ana.token, headers: ["Idempotency-Key": "anouk-2"])
            XCTAssertEqual(deleted.status, 204, deleted.text)
            XCTAssertEqual(try client.sql("SELECT count(*) FROM idempotency_keys WHERE scope = $1", [scope])[0][0], "0")
        }
    }

    /// `pg_dump` of the whole database (schema and every table's rows), as text.
    static func dump(_ connectionString: String) throws -> String {
        let tool = try XCTUnwrap(EmbeddedPostgres.tool("pg_dump"), "pg_dump is not installed beside the server")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["--no-owner", "-d", connectionString]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return String(decoding: data, as: UTF8.self)
    }
}
