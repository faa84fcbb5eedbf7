import Foundation
import Gateway
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Postgres
import SniffMeetClient
import Synchronization
import XCTest

/// The error codes of the story's routes that need a setup of their own: time passed (moved
/// in the database, where the server keeps it: `expires_at`, a stored answer's `created_at`),
/// an operator's suspension, a second actor, a read model behind. Each reached once and decoded
/// as the generated error type.
final class ClientErrorCodesTests: XCTestCase {
    func testSignUpAndSignInRefusals() async throws {
        let reached = Reached()
        let fixture = try ClientFixture("clientsessions")
        try await fixture.run { server in
            // A repeated sign-up never shows its token again.
            let phone = Phone(server)
            let signUp = {
                try await phone.client.signUp(headers: .init(idempotencyKey: "sign-up-1"), body: .json(ClientStoryTests.profile("bori")))
            }
            let signedUp = try await signUp().created.body.json
            reached.expect(try await signUp(), "signUp", "conflict", "already_registered")
            let (bori, boriID) = (phone, signedUp.userId)
            bori.state.token = signedUp.token

            // Nor does a repeated sign-in.
            let code = try await bori.client.newTransferCode().created.body.json.transferCode
            let second = Phone(server)
            let signIn = {
                try await second.client.signIn(headers: .init(idempotencyKey: "sign-in-1"), body: .json(.init(transferCode: code)))
            }
            _ = try await signIn().created
            reached.expect(try await signIn(), "signIn", "conflict", "already_registered")

            // An expired code (spent all the same).
            let late = try await bori.client.newTransferCode().created.body.json.transferCode
            try fixture.sql("UPDATE transfer_codes SET expires_at = now() - interval '1 second'")
            reached.expect(
                try await Phone(server).client.signIn(body: .json(.init(transferCode: late))),
                "signIn",
                "gone",
                "transfer_code_expired"
            )

            // A suspended account's code.
            let suspended = try await bori.client.newTransferCode().created.body.json.transferCode
            let operators = Phone(server, token: "admin-secret")
            _ = try await operators.client.suspendUser(path: .init(id: boriID), body: .json(.init(reason: "spam"))).noContent
            reached.expect(
                try await Phone(server).client.signIn(body: .json(.init(transferCode: suspended))),
                "signIn",
                "forbidden",
                "account_suspended"
            )

            // A cursor that no page handed out.
            let coco = Phone(server)
            _ = try await ClientStoryTests.signUp(coco, "coco")
            reached.expect(
                try await coco.client.listSessions(query: .init(cursor: "not a cursor")),
                "listSessions",
                "badRequest",
                "validation_failed"
            )
        }
        XCTAssertEqual(reached.all.sorted(), Self.signUpAndSignIn)
    }

    static let signUpAndSignIn = [
        "listSessions validation_failed",
        "signIn account_suspended",
        "signIn already_registered",
        "signIn transfer_code_expired",
        "signUp already_registered",
    ].sorted()

    func testMateRequestRefusals() async throws {
        let reached = Reached()
        let fixture = try ClientFixture("clientmates")
        try await fixture.run { server in
            let bori = Phone(server)
            let coco = Phone(server)
            _ = try await ClientStoryTests.signUp(bori, "bori")
            let cocoID = try await ClientStoryTests.signUp(coco, "coco")

            let expired = try await coco.client.newDropToken().created.body.json.dropToken
            try fixture.sql("UPDATE drop_tokens SET expires_at = now() - interval '1 minute'")
            reached.expect(
                try await bori.client.requestMate(body: .json(.init(to: cocoID, dropToken: expired))),
                "requestMate",
                "gone",
                "drop_token_expired"
            )

            // Only the addressee answers, only the requester cancels, and only while pending.
            let drop = try await coco.client.newDropToken().created.body.json.dropToken
            let request = try await bori.client.requestMate(body: .json(.init(to: cocoID, dropToken: drop))).created.body.json.requestId
            reached.expect(try await bori.client.declineMate(path: .init(id: request)), "declineMate", "forbidden", "not_addressee")
            reached.expect(
                try await coco.client.cancelMateRequest(path: .init(id: request)),
                "cancelMateRequest",
                "forbidden",
                "not_requester"
            )
            _ = try await coco.client.declineMate(path: .init(id: request)).ok
            reached.expect(try await coco.client.declineMate(path: .init(id: request)), "declineMate", "conflict", "not_pending")
            reached.expect(
                try await bori.client.cancelMateRequest(path: .init(id: request)),
                "cancelMateRequest",
                "conflict",
                "not_pending"
            )
        }
        XCTAssertEqual(reached.all.sorted(), Self.mateRequests)
    }

    static let mateRequests = [
        "cancelMateRequest not_pending",
        "cancelMateRequest not_requester",
        "declineMate not_addressee",
        "declineMate not_pending",
        "requestMate drop_token_expired",
    ]

    /// Walks answerable for one second; chat between mates that part; a message edited after
    /// its 15 minutes, the commands' clock moved past them.
    func testWalkAndChatRefusals() async throws {
        let reached = Reached()
        let later = Mutex<TimeInterval>(0)
        try await ClientFixture("clientwalks") { configuration in
            configuration.walkTTL = 1
            configuration.clock = { Date().addingTimeInterval(later.withLock { $0 }) }
        }.run { server in
            let (bori, coco, boriID, cocoID) = try await Self.mates(server)
            let early = try await bori.client.sendChatMessage(path: .init(userId: cocoID), body: .json(.init(text: "Ten minutes late")))
                .created.body.json.messageId
            later.withLock { $0 = 16 * 60 }
            reached.expect(
                try await bori.client.editChatMessage(path: .init(userId: cocoID, messageId: early), body: .json(.init(text: "Twenty"))),
                "editChatMessage",
                "gone",
                "edit_window_passed"
            )
            later.withLock { $0 = 0 }
            let walk = try await bori.client.sendWalk(
                body: .json(.init(to: cocoID, message: "Now?", latitude: 37.5444, longitude: 127.0374))
            ).created.body.json.walkId
            reached.expect(try await coco.client.cancelWalk(path: .init(id: walk)), "cancelWalk", "forbidden", "not_sender")
            try await Task.sleep(for: .milliseconds(1200))
            reached.expect(
                try await coco.client.respondWalk(path: .init(id: walk), body: .json(.init(answer: .accept))),
                "respondWalk",
                "gone",
                "walk_expired"
            )
            reached.expect(try await bori.client.cancelWalk(path: .init(id: walk)), "cancelWalk", "gone", "walk_expired")

            let message = try await bori.client.sendChatMessage(path: .init(userId: cocoID), body: .json(.init(text: "Hi")))
                .created.body.json.messageId
            reached.expect(
                try await coco.client.unsendChatMessage(path: .init(userId: boriID, messageId: message)),
                "unsendChatMessage",
                "forbidden",
                "not_sender"
            )
            _ = try await bori.client.unpair(path: .init(userId: cocoID)).noContent
            reached.expect(
                try await bori.client.editChatMessage(path: .init(userId: cocoID, messageId: message), body: .json(.init(text: "Hi!"))),
                "editChatMessage",
                "conflict",
                "not_mates"
            )
            reached.expect(try await bori.client.chatTyping(path: .init(userId: cocoID)), "chatTyping", "conflict", "not_mates")
        }
        XCTAssertEqual(reached.all.sorted(), Self.walksAndChat)
    }

    static let walksAndChat = [
        "cancelWalk not_sender",
        "cancelWalk walk_expired",
        "chatTyping not_mates",
        "editChatMessage edit_window_passed",
        "editChatMessage not_mates",
        "respondWalk walk_expired",
        "unsendChatMessage not_sender",
    ]

    /// A key used again after its stored answer is no longer kept (24 hours; here the stored
    /// answer is made older in the database): the command id derived from it is the earlier
    /// command's, whose events come back as a replay. No route may take them for its own.
    func testAKeyUsedAgainAfterItsAnswerIsNoLongerKept() async throws {
        let reached = Reached()
        let fixture = try ClientFixture("clientoldkeys")
        try await fixture.run { server in
            let (bori, coco, _, cocoID) = try await Self.mates(server)
            let age = { try fixture.sql("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'") }
            let profileKey = Tamper(headers: ["Idempotency-Key": "profile-change"])
            _ = try await bori.client(tamper: profileKey).updateMe(body: .json(.init(dogName: "Bori II"))).ok
            try age()
            reached.expect(
                try await bori.client(tamper: profileKey).sendWalk(
                    body: .json(.init(to: cocoID, message: "Now?", latitude: 37.5444, longitude: 127.0374))
                ),
                "sendWalk",
                "notFound",
                "not_found"
            )
            try age()
            let drop = try await coco.client.newDropToken().created.body.json.dropToken
            reached.expect(
                try await bori.client(tamper: profileKey).requestMate(body: .json(.init(to: cocoID, dropToken: drop))),
                "requestMate",
                "notFound",
                "not_found"
            )
            try age()
            reached.expect(
                try await bori.client(tamper: profileKey).sendChatMessage(path: .init(userId: cocoID), body: .json(.init(text: "Hi"))),
                "sendChatMessage",
                "unprocessableContent",
                "idempotency_key_reused"
            )
            try age()
            // Was `204` with nothing deleted.
            reached.expect(
                try await bori.client(tamper: profileKey).deleteMe(),
                "deleteMe",
                "unprocessableContent",
                "idempotency_key_reused"
            )
            let stillThere = try await bori.client.getMe().ok.body.json
            XCTAssertEqual(stillThere.dogName, "Bori II")

            let walkKey = Tamper(headers: ["Idempotency-Key": "walk"])
            _ = try await bori.client(tamper: walkKey).sendWalk(
                body: .json(.init(to: cocoID, message: "Later?", latitude: 37.5444, longitude: 127.0374))
            ).created
            try age()
            reached.expect(
                try await bori.client(tamper: walkKey).updateMe(body: .json(.init(dogName: "Bori III"))),
                "updateMe",
                "notFound",
                "not_found"
            )

        }
        XCTAssertEqual(reached.all.sorted(), Self.keysUsedAgain)
    }

    static let keysUsedAgain = [
        "deleteMe idempotency_key_reused",
        "requestMate not_found",
        "sendChatMessage idempotency_key_reused",
        "sendWalk not_found",
        "updateMe not_found",
    ]

    /// Without projectors the profile is not in its read model yet; a client that does not
    /// send `Min-Log-Position` is answered at once.
    func testMyProfileBeforeItsReadModelHasIt() async throws {
        let reached = Reached()
        try await ClientFixture("clientprofile", background: []).run { server in
            let bori = Phone(server)
            _ = try await ClientStoryTests.signUp(bori, "bori")
            let impatient = SniffMeetClient.make(
                serverURL: server,
                transport: AsyncHTTPClientTransport(),
                state: bori.state,
                configuration: .init(retry: .init(maxRetries: 0), readYourWrites: false)
            )
            reached.expect(try await impatient.getMe(), "getMe", "notFound", "not_found")
        }
        XCTAssertEqual(reached.all.sorted(), ["getMe not_found"])
    }

    /// Two sessions of one account delete it at once. A deletion revokes the account's sessions
    /// in its own transaction, so the later request is normally refused at authentication
    /// (`401`); here both are past it. The test holds the account's session rows locked (`FOR
    /// UPDATE`: authentication only reads them), so the deletion that appends first waits, before
    /// its commit, to revoke them, and the other waits for that one's lock on the user stream,
    /// its decision taken on the account as it was. Once both wait, the rows are let go: the
    /// first commits, and the other's conditioned append finds the stream moved, decides again
    /// on the deleted account, and is refused.
    func testTwoSessionsDeletingTheAccountAtOnce() async throws {
        let reached = Reached()
        let fixture = try ClientFixture("clientdeletions")
        try await fixture.run { server in
            let bori = Phone(server)
            let boriText = try await ClientStoryTests.signUp(bori, "bori")
            let boriID = try XCTUnwrap(UUID(uuidString: boriText))
            let code = try await bori.client.newTransferCode().created.body.json.transferCode
            let secondPhone = Phone(server)
            secondPhone.state.token = try await secondPhone.client.signIn(body: .json(.init(transferCode: code))).created.body.json.token

            let owner = try Connection(connectionString: fixture.ownerURL)
            _ = try owner.execute("BEGIN", [])
            XCTAssertEqual(try owner.execute("SELECT 1 FROM sessions WHERE user_id = $1 FOR UPDATE", [boriID]).count, 2)
            async let first = bori.client.deleteMe()
            async let second = secondPhone.client.deleteMe()
            let bothWaiting: Bool
            do {
                bothWaiting = try await Self.waitForTwoDeletions(on: owner)
            } catch {
                _ = try? owner.execute("ROLLBACK", [])
                throw error
            }
            _ = try owner.execute("ROLLBACK", [])
            XCTAssertTrue(bothWaiting, "the two deletions never both waited inside their transactions")

            let answers = try await [first, second]
            XCTAssertEqual(answers.filter { if case .noContent = $0 { true } else { false } }.count, 1, "\(answers)")
            guard let refused = answers.first(where: { errorAnswer($0) != nil }) else { return XCTFail("\(answers)") }
            reached.expect(refused, "deleteMe", "notFound", "user_not_found")
            let deletions = try owner.execute("SELECT count(*) FROM events WHERE event_type = 'user_deleted'", [])
            XCTAssertEqual(try deletions.rows[0].int(0), 1)
            // Neither answer stays behind under the deleted account (its stored answers go with it).
            let stored = try owner.execute("SELECT count(*) FROM idempotency_keys WHERE scope = $1", [boriID])
            XCTAssertEqual(try stored.rows[0].int(0), 0)
            let afterwards = try await secondPhone.client.getMe()
            XCTAssertEqual(errorAnswer(afterwards)?.error.error.code, "unauthorized")
        }
        XCTAssertEqual(reached.all.sorted(), ["deleteMe user_not_found"])
    }

    /// Waits (3 seconds at most, well inside the server's statement timeout) until a request
    /// waits for `owner`'s locks and another for that request's; false if that never happens.
    private static func waitForTwoDeletions(on owner: Connection) async throws -> Bool {
        // `pg_locks` is read afresh by every statement (`pg_stat_activity` keeps a snapshot per
        // transaction).
        let chain = """
            SELECT count(*)
            FROM (SELECT DISTINCT pid FROM pg_locks WHERE NOT granted) AS first,
                 (SELECT DISTINCT pid FROM pg_locks WHERE NOT granted) AS second
            WHERE pg_backend_pid() = ANY(pg_blocking_pids(first.pid)) AND first.pid = ANY(pg_blocking_pids(second.pid))
            """
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline {
            if try owner.execute(chain, []).rows[0].int(0) > 0 { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    static let all = Set(signUpAndSignIn + mateRequests + walksAndChat + keysUsedAgain + ["getMe not_found", "deleteMe user_not_found"])

    /// Bori and Coco, mates.
    static func mates(_ server: URL) async throws -> (Phone, Phone, String, String) {
        let bori = Phone(server)
        let coco = Phone(server)
        let boriID = try await ClientStoryTests.signUp(bori, "bori")
        let cocoID = try await ClientStoryTests.signUp(coco, "coco")
        let drop = try await coco.client.newDropToken().created.body.json.dropToken
        let request = try await bori.client.requestMate(body: .json(.init(to: cocoID, dropToken: drop))).created.body.json.requestId
        _ = try await coco.client.acceptMate(path: .init(id: request)).ok
        return (bori, coco, boriID, cocoID)
    }
}
