import Foundation
import Gateway
import OpenAPIRuntime
import SniffMeetClient
import XCTest

/// The error answers every route of the story shares, provoked on all of them at once: each
/// sweep calls every operation of the story under one condition (no token, the database down,
/// a malformed body, ...) and checks that exactly the operations whose documentation lists the
/// code answer it, with the documented status, decoded as the generated error type.
final class ClientSharedErrorCodesTests: XCTestCase {
    /// A token of the right shape that no session has.
    static let strangerToken = String(repeating: "x", count: 43)

    /// Asserts that the operations answering `code` in `answers` are exactly the story's
    /// operations documented with it (less those `swept` leaves to other tests), each with its
    /// documented status.
    static func assertSweep(_ code: String, _ answers: [String: Answered], file: StaticString = #filePath, line: UInt = #line) {
        let except = swept[code] ?? []
        // Of all the story's operations: one the sweep did not call is missing too.
        let documented = DocumentedErrorCodes.of(StoryOperations.operations).filter { $0.code == code && !except.contains($0.operation) }
        let answered = answers.filter { $0.value.code == code && !except.contains($0.key) }
        let missing = documented.map(\.operation).filter { answered[$0] == nil }.sorted()
        let answer = { (operation: String) in answers[operation].map { "\(operation) \($0)" } ?? "\(operation) not called" }
        let extra = answered.keys.filter { operation in !documented.contains { $0.operation == operation } }.sorted()
        XCTAssertTrue(
            missing.isEmpty && extra.isEmpty,
            "documented with \(code) but answered otherwise: \(missing.map(answer)); "
                + "answered \(code) undocumented: \(extra)",
            file: file,
            line: line
        )
        for pair in documented where answered[pair.operation] != nil {
            XCTAssertEqual(answered[pair.operation]?.status, pair.status, "\(pair)", file: file, line: line)
        }
    }

    /// The codes the sweeps below reach on every operation documented with them, less the
    /// operations named, whose answer with that code needs a setup of its own
    /// (`ClientErrorCodesTests`).
    static let swept: [String: Set<String>] = [
        "unavailable": [],
        "overloaded": [],
        "request_timeout": [],
        "rate_limited": [],
        "unauthorized": [],
        "not_caught_up": [],
        "invalid_json": [],
        "body_too_large": [],
        // A nickname too short (the story), a cursor no page handed out.
        "validation_failed": ["nicknameAvailability", "listSessions"],
        // A key of another command whose answer is gone: nothing deleted.
        "idempotency_key_reused": ["deleteMe"],
        "idempotency_key_in_use": [],
        // A command id that another command used (its key's answer no longer kept); a read model behind.
        "not_found": ["getMe", "updateMe", "requestMate", "sendWalk"],
    ]

    // MARK: The database

    /// Every operation called once by a stranger's token and once anonymously, on a server set up
    /// by `configure` (streams end after a second), each answer checked against `code`.
    func sweepAsAStranger(
        _ label: String,
        expecting code: String,
        _ configure: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws {
        let fixture = try ClientFixture(label) { configuration in
            configuration.streamMaxDuration = .seconds(1)
            configure(&configuration)
        }
        try await fixture.run { server in
            let answers = try await StoryOperations.callAll(
                signedIn: Phone(server, token: Self.strangerToken).client(tamper: Tamper()),
                anonymous: Phone(server).client(tamper: Tamper()),
                .random()
            )
            Self.assertSweep(code, answers)
        }
    }

    func testDatabaseDownIsUnavailableOnEveryRoute() async throws {
        try await sweepAsAStranger("clientdown", expecting: "unavailable") {
            $0.databaseURL = "host=127.0.0.1 port=1 dbname=nothing connect_timeout=1"
        }
    }

    /// No request may wait for the database: every route that needs it answers `overloaded` at once.
    func testOverloadedOnEveryRoute() async throws {
        try await sweepAsAStranger("clientoverload", expecting: "overloaded") { $0.maxConcurrentDatabaseWaits = 0 }
    }

    /// Every table locked by another transaction: the requests wait (in the pool or in
    /// PostgreSQL) past the request timeout.
    func testRequestTimeoutOnEveryRoute() async throws {
        let fixture = try ClientFixture("clienttimeout") {
            $0.requestTimeout = .milliseconds(300)
            $0.statementTimeout = .seconds(2)
            $0.streamMaxDuration = .seconds(1)
        }
        try await fixture.run { server in
            let answers = try await fixture.withAllTablesLocked {
                try await StoryOperations.callAllAtOnce(
                    signedIn: Phone(server, token: Self.strangerToken).client(tamper: Tamper()),
                    anonymous: Phone(server).client(tamper: Tamper()),
                    .random()
                )
            }
            Self.assertSweep("request_timeout", answers)
        }
    }

    // MARK: Budgets and tokens

    /// Budgets of one request: after sign-up and one request, the user's is spent, and so is the address's.
    func testRateLimitedOnEveryRoute() async throws {
        let one = RateLimiter.Budget(burst: 1, perSecond: 0.001)
        let fixture = try ClientFixture("clientbudget") {
            $0.rateLimits = .init(ip: one, signUp: one, user: one, nicknames: one, messages: one)
            $0.streamMaxDuration = .seconds(1)
        }
        try await fixture.run { server in
            let bori = Phone(server)
            _ = try await ClientStoryTests.signUp(bori, "bori")
            _ = try await bori.client.getMe().ok
            let answers = try await StoryOperations.callAll(
                signedIn: bori.client(tamper: Tamper()),
                anonymous: Phone(server).client(tamper: Tamper()),
                .random()
            )
            Self.assertSweep("rate_limited", answers)
        }
    }

    func testUnauthorizedOnEveryRouteWithoutAGoodToken() async throws {
        try await sweepAsAStranger("clientnotoken", expecting: "unauthorized")
    }

    /// Without projectors the read models never reach the sign-up's position, which the
    /// client sends as `Min-Log-Position` with every query.
    func testNotCaughtUpOnEveryQuery() async throws {
        let fixture = try ClientFixture("clientbehind", background: []) {
            $0.readYourWritesTimeout = .milliseconds(200)
            $0.streamMaxDuration = .seconds(1)
        }
        try await fixture.run { server in
            let bori = Phone(server)
            _ = try await ClientStoryTests.signUp(bori, "bori")
            XCTAssertNotNil(bori.state.logPosition)
            let answers = try await StoryOperations.callAll(
                signedIn: bori.client(tamper: Tamper()),
                anonymous: Phone(server).client(tamper: Tamper()),
                .random()
            )
            Self.assertSweep("not_caught_up", answers)
        }
    }

    // MARK: Malformed requests

    /// Bodies no generated client sends (too large, not JSON) and header values it would not
    /// choose (`Tamper`), on every route of a real story.
    func testMalformedRequestsOnEveryRoute() async throws {
        try await ClientFixture("clientmalformed") { $0.streamMaxDuration = .seconds(1) }.run { server in
            let story = try await StorySetUp.run(server)
            // Past the walk log's 2 MiB, and so past every other route's 16 KiB.
            let large = Tamper(body: { _ in Data(repeating: UInt8(ascii: " "), count: (2 << 20) + 1) })
            Self.assertSweep(
                "body_too_large",
                try await StoryOperations.callAll(
                    signedIn: story.bori.client(tamper: large),
                    anonymous: story.newPhone.client(tamper: large),
                    story.ids,
                    only: StoryOperations.bodied
                )
            )
            let badHeaders = Tamper(headers: [
                "Idempotency-Key": "not a key", "Min-Log-Position": "not-a-position", "Last-Event-ID": "not-an-id",
            ])
            Self.assertSweep(
                "validation_failed",
                try await StoryOperations.callAll(
                    signedIn: story.bori.client(tamper: badHeaders),
                    anonymous: story.newPhone.client(tamper: badHeaders),
                    story.ids,
                    // Deletion is not undone by a refusal of another route's: it is tried by itself.
                    only: Set(StoryOperations.operations).subtracting(["deleteMe"])
                )
            )
            // Last: the routes that take no body run with this one.
            let notJSON = Tamper(body: { _ in Data("{\"".utf8) })
            Self.assertSweep(
                "invalid_json",
                try await StoryOperations.callAll(
                    signedIn: story.bori.client(tamper: notJSON),
                    anonymous: story.newPhone.client(tamper: notJSON),
                    story.ids,
                    only: StoryOperations.bodied
                )
            )
        }
    }

    /// Ids of nothing, on every route of a real story: UUIDs no one has, and text that is no
    /// UUID (which names nothing either: `404`, not `400`).
    func testNotFoundOnEveryRouteThatTakesAnId() async throws {
        try await ClientFixture("clientnotfound") { $0.streamMaxDuration = .seconds(1) }.run { server in
            let story = try await StorySetUp.run(server)
            var answers: [String: Answered] = [:]
            for ids in [StoryIDs.random(), .notUUIDs()] {
                let some = try await StoryOperations.callAll(
                    signedIn: story.bori.client(tamper: Tamper()),
                    anonymous: story.newPhone.client(tamper: Tamper()),
                    ids,
                    only: Set(StoryOperations.operations).subtracting(["deleteMe"])
                )
                answers.merge(some) { first, second in first.code == "not_found" ? first : second }
            }
            Self.assertSweep("not_found", answers)
        }
    }

    // MARK: Idempotency keys

    /// The same key with another request (`idempotency_key_reused`), and with the same request
    /// when the stored answer cannot be opened, as after the server secret was replaced
    /// (`idempotency_key_in_use`: the store cannot tell it from an answer still being written).
    func testIdempotencyKeysOnEveryCommand() async throws {
        let fixture = try ClientFixture("clientkeys") { $0.streamMaxDuration = .seconds(1) }
        try await fixture.run { server in
            let story = try await StorySetUp.run(server)
            let commands = StoryOperations.writes.subtracting(["deleteMe"])
            let call = { (tamper: Tamper) in
                try await StoryOperations.callAll(
                    signedIn: story.bori.client(tamper: tamper),
                    anonymous: story.newPhone.client(tamper: tamper),
                    story.ids,
                    only: commands
                )
            }
            _ = try await call(Tamper(keyPerOperation: "first"))
            let changed = Tamper(keyPerOperation: "first", body: { $0.isEmpty ? Data("{}".utf8) : $0 + Data(" ".utf8) })
            Self.assertSweep("idempotency_key_reused", try await call(changed))
            try fixture.sql("UPDATE idempotency_keys SET sealed_body = '\\x00'::bytea")
            Self.assertSweep("idempotency_key_in_use", try await call(Tamper(keyPerOperation: "first")))

            // One key for every command, and its stored answer lost: every command then runs
            // under the first one's command id (a replay of another command), never a 5xx.
            for (operation, answer) in try await call(Tamper(headers: ["Idempotency-Key": "one-for-all"])) {
                XCTAssertLessThan(answer.status, 500, "\(operation) \(answer)")
            }
            try fixture.sql("UPDATE idempotency_keys SET sealed_body = '\\x00'::bytea")
            for (operation, answer) in try await call(Tamper(headers: ["Idempotency-Key": "one-for-all"])) {
                XCTAssertLessThan(answer.status, 500, "\(operation) \(answer)")
            }
        }
    }
}

/// A story's state to call every operation on: Bori and Coco are mates; Bori has sent Coco a
/// walk and a message, asked Dodo to be mates, recorded a walk log, made a transfer code.
struct StorySetUp {
    let bori: Phone
    let coco: Phone
    /// A phone without an account.
    let newPhone: Phone
    let ids: StoryIDs

    static func run(_ server: URL) async throws -> StorySetUp {
        let bori = Phone(server)
        let coco = Phone(server)
        let dodo = Phone(server)
        _ = try await ClientStoryTests.signUp(bori, "bori")
        let cocoID = try await ClientStoryTests.signUp(coco, "coco")
        let dodoID = try await ClientStoryTests.signUp(dodo, "dodo")
        let drop = try await coco.client.newDropToken().created.body.json
        let asked = try await bori.client.requestMate(body: .json(.init(to: cocoID, dropToken: drop.dropToken))).created.body.json
        _ = try await coco.client.acceptMate(path: .init(id: asked.requestId)).ok
        let dodoDrop = try await dodo.client.newDropToken().created.body.json
        let pending = try await bori.client.requestMate(body: .json(.init(to: dodoID, dropToken: dodoDrop.dropToken))).created.body.json
        let walk = try await bori.client.sendWalk(
            body: .json(.init(to: cocoID, message: "Park?", latitude: 37.5444, longitude: 127.0374))
        ).created.body.json
        let message = try await bori.client.sendChatMessage(path: .init(userId: cocoID), body: .json(.init(text: "Hi"))).created.body.json
        let log = try await bori.client.recordWalkLog(body: .json(.init(points: ClientStoryTests.track())))
            .created.body.json
        let notifications = try await bori.client.listNotifications().ok.body.json
        let code = try await bori.client.newTransferCode().created.body.json
        let again = try await coco.client.newDropToken().created.body.json
        return StorySetUp(
            bori: bori,
            coco: coco,
            newPhone: Phone(server),
            ids: StoryIDs(
                mate: cocoID,
                request: pending.requestId,
                walk: walk.walkId,
                message: message.messageId,
                walkLog: log.walkLogId,
                notification: try XCTUnwrap(notifications.items.first).notificationId,
                dropToken: again.dropToken,
                transferCode: code.transferCode
            )
        )
    }
}
