import Commands
import Domain
import EventLog
import Foundation
import Postgres
import PostgresTesting
import Projections
import XCTest

final class CommandHandlerTests: XCTestCase {
    func testSixteenConcurrentSignUpsWithOneNicknameInDifferentCaseOneWins() async throws {
        let (handler, pool) = try makeHandler("nickname")
        let spellings = ["Rex", "REX", "rex", "rEx"]
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let user = UUID()
                    do {
                        _ = try await handler.handle(
                            .registerUser(userID: user, profile: dogProfile(spellings[index % 4])),
                            metadata: as_(user)
                        )
                        return "ok"
                    } catch let error as CommandError {
                        return error.code
                    }
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertEqual(outcomes.filter { $0 == "ok" }.count, 1)
        XCTAssertEqual(outcomes.filter { $0 == "nickname_taken" }.count, 15)
        let reserved = try await pool.withConnection {
            try $0.execute("SELECT count(*) FROM events WHERE event_type = 'nickname_reserved'").first!.int(0)
        }
        XCTAssertEqual(reserved, 1)
        await pool.close()
    }

    /// A sign-up presumes its nickname free when this process knows nothing of it (no read
    /// before the append): a nickname another process reserved is still refused, and the
    /// refused sign-up leaves neither events nor a data key.
    func testASignUpForANicknameTakenInAnotherProcessIsRefusedAndWritesNothing() async throws {
        let (here, pool) = try makeHandler("presumed-nickname")
        defer { Task { await pool.close() } }
        let elsewhere = CommandHandler(log: here.log, sealer: TestDatabase.sealer, walkTTL: 60)
        let first = UUID()
        _ = try await elsewhere.handle(.registerUser(userID: first, profile: dogProfile("Bori")), metadata: as_(first))
        let second = UUID()
        do {
            _ = try await here.handle(.registerUser(userID: second, profile: dogProfile("bori")), metadata: as_(second))
            XCTFail("a nickname reserved by another process must be refused")
        } catch let error as CommandError {
            XCTAssertEqual(error.code, "nickname_taken")
        }
        let written = try await pool.withConnection { connection in
            (
                try connection.execute("SELECT count(*) FROM events WHERE stream_id = $1", [StreamName.user(second).rawValue]).first!.int(
                    0
                ),
                try connection.execute("SELECT count(*) FROM data_keys WHERE user_id = $1", [second]).first!.int(0)
            )
        }
        XCTAssertEqual(written.0, 0)
        XCTAssertEqual(written.1, 0)
        // A free nickname goes through at once, with its key.
        let third = UUID()
        _ = try await here.handle(.registerUser(userID: third, profile: dogProfile("Lumi")), metadata: as_(third))
        let keys = try await pool.withConnection { connection in
            try connection.execute("SELECT count(*) FROM data_keys WHERE user_id = $1 AND sealed_key IS NOT NULL", [third]).first!.int(0)
        }
        XCTAssertEqual(keys, 1)
    }

    /// Two processes, each with its own stream cache: what one appends, the other sees on its
    /// next load (the cache is only a starting point; newer events are always read).
    func testStreamCacheSeesAppendsOfAnotherProcess() async throws {
        let (here, pool) = try makeHandler("cache")
        let elsewhere = CommandHandler(log: here.log, sealer: TestDatabase.sealer, walkTTL: 60)
        let users = try await register(2, with: here)
        try await makeMates(users[0], users[1], with: here)
        // `here` has the pair stream cached as mates; `elsewhere` unpairs them.
        _ = try await here.states(of: [.mates(users[0], users[1])])
        _ = try await elsewhere.handle(.unpair(by: users[1], mate: users[0]), metadata: as_(users[1]))
        do {
            _ = try await here.handle(
                .sendWalk(
                    walkID: UUID(),
                    from: users[0],
                    to: users[1],
                    message: "Park?",
                    latitude: 1,
                    longitude: 1,
                    placeName: nil
                ),
                metadata: .firstUse(actor: users[0])
            )
            XCTFail("a walk to someone who unpaired must be refused")
        } catch let error as CommandError {
            XCTAssertEqual(error.code, "not_mates")
        }
        // And the cached fold equals a fold from scratch.
        let cached = try await here.states(of: [.mates(users[0], users[1]), .user(users[0])])
        let fresh = try await CommandHandler(log: here.log, sealer: TestDatabase.sealer).states(of: [
            .mates(users[0], users[1]), .user(users[0]),
        ])
        XCTAssertEqual(cached, fresh)
        await pool.close()
    }

    func testRetriedCommandIDWritesNothingAndReturnsTheFirstResult() async throws {
        let (handler, pool) = try makeHandler("retry")
        let users = try await register(2, with: handler)
        try await makeMates(users[0], users[1], with: handler)
        let walkID = UUID()
        let metadata = CommandMetadata(actor: users[0])
        let send = Command.sendWalk(
            walkID: walkID,
            from: users[0],
            to: users[1],
            message: "Park?",
            latitude: 52.5,
            longitude: 13.4,
            placeName: nil
        )
        let first = try await handler.handle(send, metadata: metadata)
        XCTAssertFalse(first.replayed)
        let countBefore = try await pool.withConnection { try $0.execute("SELECT count(*) FROM events").first!.int(0) }
        // The same command id again, even though deciding anew would now be refused (the walk exists).
        let again = try await handler.handle(send, metadata: metadata)
        XCTAssertTrue(again.replayed)
        XCTAssertEqual(again.position, first.position)
        XCTAssertEqual(again.events.map(\.event), first.events.map(\.event))
        let countAfter = try await pool.withConnection { try $0.execute("SELECT count(*) FROM events").first!.int(0) }
        XCTAssertEqual(countAfter, countBefore)
        // A new command id for the same walk is refused by the domain.
        do {
            _ = try await handler.handle(send, metadata: CommandMetadata(actor: users[0]))
            XCTFail("a second walk with the same id must be refused")
        } catch let error as CommandError {
            XCTAssertEqual(error.code, "already_exists")
        }
        await pool.close()
    }

    func testDropTokensAreSingleUseForTheirOwnerAndExpire() async throws {
        let clock = TestClock()
        let (handler, pool) = try makeHandler("droptoken", clock: clock)
        let users = try await register(3, with: handler)
        let (a, b, c) = (users[0], users[1], users[2])
        func code(_ body: () async throws -> Void) async -> String? {
            do {
                try await body()
                return nil
            } catch let error as CommandError { return error.code } catch { return "\(error)" }
        }
        let fromB = try await handler.issueDropToken(for: b)
        XCTAssertEqual(fromB.expiresAt.timeIntervalSince(clock.now), 300, accuracy: 1)
        // A token handed out by B is good only for a request to B.
        let wrongAddressee = await code { _ = try await handler.requestMate(from: a, to: c, dropToken: fromB.token, metadata: as_(a)) }
        XCTAssertEqual(wrongAddressee, "invalid_drop_token")
        let unknown = await code { _ = try await handler.requestMate(from: a, to: b, dropToken: "forged", metadata: as_(a)) }
        XCTAssertEqual(unknown, "invalid_drop_token")
        let requested = try await handler.requestMate(from: a, to: b, dropToken: fromB.token, metadata: as_(a))
        XCTAssertEqual(requested.events.map(\.event.typeName), ["mate_requested"])
        // Spent: C cannot use it.
        let reused = await code { _ = try await handler.requestMate(from: c, to: b, dropToken: fromB.token, metadata: as_(c)) }
        XCTAssertEqual(reused, "invalid_drop_token")
        // Expired after five minutes.
        let fromC = try await handler.issueDropToken(for: c)
        clock.advance(301)
        let expired = await code { _ = try await handler.requestMate(from: a, to: c, dropToken: fromC.token, metadata: as_(a)) }
        XCTAssertEqual(expired, "drop_token_expired")
        let requestsToC = try await pool.withConnection {
            try $0.execute("SELECT count(*) FROM events WHERE event_type = 'mate_requested' AND data->>'to' = $1", [c]).first!.int(0)
        }
        XCTAssertEqual(requestsToC, 0)
        // The request is found by its id alone.
        guard case .mateRequested(let request) = requested.events[0].event else { return XCTFail() }
        let pair = try await handler.pairOfRequest(request.requestID)
        XCTAssertEqual(pair, MatePair(a, b))
        let none = try await handler.pairOfRequest(UUID())
        XCTAssertNil(none)
        await pool.close()
    }

    /// A mate request presenting a token this process issued is decided without reading the
    /// token, and with the pair's stream presumed empty when this process knows nothing of it
    /// (first uses of a command id, as without an `Idempotency-Key`; a reused id reads first).
    /// Neither memory can make it accept what the database refuses: a token spent or deleted by
    /// another process, or a pair that another process made mates, are refused as if read, and
    /// the refused requests write nothing.
    func testARequestDecidedOnAnIssuedTokenStillFindsWhatAnotherProcessDid() async throws {
        let (here, pool) = try makeHandler("issued-token")
        defer { Task { await pool.close() } }
        let elsewhere = CommandHandler(log: here.log, sealer: TestDatabase.sealer, walkTTL: 60)
        let users = try await register(6, with: here)
        let (a, b, c, d, e, f) = (users[0], users[1], users[2], users[3], users[4], users[5])
        func code(_ body: () async throws -> Void) async -> String? {
            do {
                try await body()
                return nil
            } catch let error as CommandError { return error.code } catch { return "\(error)" }
        }
        func requests(_ from: UUID, _ to: UUID) async throws -> Int {
            try await pool.withConnection {
                try $0.execute(
                    "SELECT count(*) FROM events WHERE event_type = 'mate_requested' AND data->>'from' = $1 AND data->>'to' = $2",
                    [from, to]
                ).first!.int(0)
            }
        }
        func unspentTokens(of user: UUID) async throws -> Int {
            try await pool.withConnection {
                try $0.execute("SELECT count(*) FROM drop_tokens WHERE user_id = $1 AND used_at IS NULL", [user]).first!.int(0)
            }
        }

        // Spent by a request another process handled.
        let fromB = try await here.issueDropToken(for: b)
        _ = try await elsewhere.requestMate(from: c, to: b, dropToken: fromB.token, metadata: as_(c))
        let spentElsewhere = await code {
            _ = try await here.requestMate(from: a, to: b, dropToken: fromB.token, metadata: .firstUse(actor: a))
        }
        XCTAssertEqual(spentElsewhere, "invalid_drop_token")
        let toB = try await requests(a, b)
        XCTAssertEqual(toB, 0)

        // Deleted with its issuer's account in another process.
        let fromD = try await here.issueDropToken(for: d)
        _ = try await elsewhere.handle(.deleteAccount(userID: d, partners: [], walks: []), metadata: as_(d))
        let gone = await code { _ = try await here.requestMate(from: a, to: d, dropToken: fromD.token, metadata: .firstUse(actor: a)) }
        XCTAssertEqual(gone, "invalid_drop_token")
        let toD = try await requests(a, d)
        XCTAssertEqual(toD, 0)

        // A pair this process never saw, made mates elsewhere: refused, and its token not spent.
        try await makeMates(a, e, with: elsewhere)
        let fromE = try await here.issueDropToken(for: e)
        let mates = await code { _ = try await here.requestMate(from: a, to: e, dropToken: fromE.token, metadata: .firstUse(actor: a)) }
        XCTAssertEqual(mates, "already_mates")
        let stillUnspent = try await unspentTokens(of: e)
        XCTAssertEqual(stillUnspent, 1, "the refused request spent its token")

        // And the straight case: the request commits and spends its token, which then serves no
        // second request (here, where it was issued, or elsewhere).
        let fromF = try await here.issueDropToken(for: f)
        let requested = try await here.requestMate(from: a, to: f, dropToken: fromF.token, metadata: .firstUse(actor: a))
        XCTAssertEqual(requested.events.map(\.event.typeName), ["mate_requested"])
        let unspentNow = try await unspentTokens(of: f)
        XCTAssertEqual(unspentNow, 0)
        let again = await code { _ = try await here.requestMate(from: c, to: f, dropToken: fromF.token, metadata: .firstUse(actor: c)) }
        XCTAssertEqual(again, "invalid_drop_token")
        let againElsewhere = await code {
            _ = try await elsewhere.requestMate(from: b, to: f, dropToken: fromF.token, metadata: as_(b))
        }
        XCTAssertEqual(againElsewhere, "invalid_drop_token")
    }

    /// "A walk cannot be sent to someone you stopped being mates with, even if the unpairing
    /// commits while the walk request is in flight": races SendWalk against Unpair many times.
    func testSendWalkRacingUnpairNeverLandsBetweenNonMates() async throws {
        let (handler, pool) = try makeHandler("race")
        let users = try await register(2, with: handler)
        let (a, b) = (users[0], users[1])
        for _ in 0..<30 {
            try await makeMates(a, b, with: handler)
            async let walk: String = {
                do {
                    _ = try await handler.handle(
                        .sendWalk(walkID: UUID(), from: a, to: b, message: "Now?", latitude: 1, longitude: 2, placeName: nil),
                        metadata: as_(a)
                    )
                    return "sent"
                } catch let error as CommandError { return error.code }
            }()
            async let unpair: Void = { _ = try await handler.handle(.unpair(by: b, mate: a), metadata: as_(b)) }()
            _ = try await (walk, unpair)
        }
        try await assertNoRuleBroken(pool)
        await pool.close()
    }

    func testWalkExpiryJobExpiresPendingWalksOnce() async throws {
        let clock = TestClock()
        let (handler, pool) = try makeHandler("expiry", clock: clock)
        let users = try await register(2, with: handler)
        try await makeMates(users[0], users[1], with: handler)
        let walkID = UUID()
        _ = try await handler.handle(
            .sendWalk(walkID: walkID, from: users[0], to: users[1], message: "Park?", latitude: 1, longitude: 1, placeName: "Park"),
            metadata: as_(users[0])
        )
        // The job reads the walks read model: let the real walks projector catch up.
        let runner = ProjectionRunner(
            log: handler.log,
            sealer: TestDatabase.sealer,
            connectionString: await pool.connectionString,
            projectors: [WalksProjector()]
        )
        runner.start()
        let caughtUp = try await runner.waitUntil(position: try await handler.log.head(), timeout: .seconds(10))
        await runner.stop()
        XCTAssertTrue(caughtUp)
        let job = WalkExpiryJob(handler: handler)
        let early = try await job.expireDue()
        XCTAssertEqual(early, 0, "nothing is due before the deadline")
        clock.advance(61)
        // Two processes running the job at once expire the walk once.
        async let first = job.expireDue()
        async let second = job.expireDue()
        let total = try await first + second
        XCTAssertEqual(total, 1)
        let expiredEvents = try await pool.withConnection {
            try $0.execute("SELECT count(*) FROM events WHERE event_type = 'walk_expired'").first!.int(0)
        }
        XCTAssertEqual(expiredEvents, 1)
        do {
            _ = try await handler.handle(.respondWalk(walkID: walkID, by: users[1], answer: .accept), metadata: as_(users[1]))
            XCTFail("answering after the deadline must be refused")
        } catch let error as CommandError {
            XCTAssertEqual(error.code, "walk_expired")
        }
        await pool.close()
    }
}

extension CommandHandlerTests {
    /// A send decided on a cached pair that another process has since unpaired: its append's
    /// condition fails, the retry reads the log and refuses. Its message key, stored only with
    /// its event, is not left behind.
    func testASendRefusedAfterAStaleCacheLeavesNoMessageKey() async throws {
        let (handler, pool) = try makeHandler("stale-send-key")
        let users = try await register(2, with: handler)
        try await makeMates(users[0], users[1], with: handler)
        let first = UUID()
        _ = try await handler.handle(
            .sendMessage(messageID: first, from: users[0], to: users[1], text: "Park?", photoID: nil),
            metadata: as_(users[0])
        )
        // Another process (a cache of its own) unpairs them; this handler's cache still says mates.
        let other = CommandHandler(log: handler.log, sealer: TestDatabase.sealer)
        _ = try await other.handle(.unpair(by: users[1], mate: users[0]), metadata: as_(users[1]))
        let refused = UUID()
        do {
            _ = try await handler.handle(
                .sendMessage(messageID: refused, from: users[0], to: users[1], text: "Late?", photoID: nil),
                // As a request sends it: no earlier run to look for, so the cache is trusted first.
                metadata: .firstUse(actor: users[0])
            )
            XCTFail("sent to a former mate")
        } catch CommandError.domain(let error) {
            XCTAssertEqual(error.code, "not_mates")
        }
        let keys = try await pool.withConnection { connection in
            try connection.execute("SELECT message_id FROM message_keys").rows.map { try $0.uuid(0) }
        }
        XCTAssertEqual(keys, [first])
        await pool.close()
    }
}
