import Commands
import Domain
import EventLog
import Foundation
import PersonalData
import Postgres
import PostgresTesting
import Projections
import XCTest

/// The log's edge for personal data: what the log holds of a user is sealed under their key,
/// and once the account is deleted, that key is gone and nothing of theirs opens again.
final class PersonalDataTests: XCTestCase {
    func testPersonalFieldsEnterTheLogOnlySealedAndOpenBackWhole() async throws {
        let (handler, pool) = try makeHandler("sealed_log")
        var users: [UUID] = []
        for nickname in ["Zqvxka", "Wqpyme"] {
            let user = UUID()
            _ = try await handler.handle(.registerUser(userID: user, profile: dogProfile(nickname)), metadata: as_(user))
            users.append(user)
        }
        try await makeMates(users[0], users[1], with: handler)
        let walkID = UUID()
        let send = Command.sendWalk(
            walkID: walkID,
            from: users[0],
            to: users[1],
            message: "Quokka pond at noon",
            latitude: 37.123457,
            longitude: 127.654321,
            placeName: "Quokkapond Gate"
        )
        let sent = try await handler.handle(send, metadata: as_(users[0]))
        let stored = try await pool.withConnection { connection in
            try connection.execute("SELECT stream_id || ' ' || data::text FROM events").rows.map { try $0.string(0) }.joined(
                separator: "\n"
            )
        }
        // (Names long enough that base64 ciphertext does not spell them by chance.)
        for text in ["Zqvxka", "zqvxka", "Wqpyme", "Bello", "Quokka", "37.123457", "127.654321"] {
            XCTAssertFalse(stored.contains(text), "the log holds \(text) in the clear")
        }
        // Nickname streams are named by a keyed hash, never by the nickname.
        XCTAssertEqual(TestDatabase.sealer.storedName(.nickname("ZQVXKA")), TestDatabase.sealer.storedName(.nickname("zqvxka")))
        XCTAssertNotEqual(TestDatabase.sealer.storedName(.nickname("Zqvxka")), TestDatabase.sealer.storedName(.nickname("Wqpyme")))
        XCTAssertTrue(stored.contains(TestDatabase.sealer.storedName(.nickname("Zqvxka"))))
        // Read back through the edge, every event is the one decided.
        let log = try await wholeLog(pool)
        XCTAssertEqual(log.last?.event, sent.events.last?.event)
        XCTAssertEqual(log.filter { if case .userRegistered = $0.event { true } else { false } }.count, 2)
        await pool.close()
    }

    func testDeletingAnAccountErasesItsEventsAndSettlesEverythingItHadAPartIn() async throws {
        let (handler, pool) = try makeHandler("erasure")
        let users = try await register(3, with: handler)
        let (ana, ben, cy) = (users[0], users[1], users[2])
        try await makeMates(ana, ben, with: handler)
        let walkID = UUID()
        _ = try await handler.handle(
            .sendWalk(walkID: walkID, from: ben, to: ana, message: "Now?", latitude: 1, longitude: 2, placeName: nil),
            metadata: as_(ben)
        )
        let drop = try await handler.issueDropToken(for: ana)
        _ = try await handler.requestMate(from: cy, to: ana, dropToken: drop.token, metadata: as_(cy))

        let deleted = try await handler.handle(.deleteAccount(userID: ana, partners: [ben, cy], walks: [walkID]), metadata: as_(ana))
        XCTAssertEqual(
            Set(deleted.events.map(\.event.typeName)),
            [
                "user_deleted", "nickname_released", "mates_unpaired", "mate_request_cancelled", "walk_cancelled",
            ]
        )
        let key = try await pool.withConnection { connection in
            try connection.execute("SELECT sealed_key IS NULL, erased_at IS NOT NULL FROM data_keys WHERE user_id = $1", [ana]).first
                .map { [try $0.bool(0), try $0.bool(1)] }
        }
        XCTAssertEqual(key, [true, true])
        let dropTokens = try await pool.withConnection {
            try $0.execute("SELECT count(*) FROM drop_tokens WHERE user_id = $1", [ana]).first!.int(0)
        }
        XCTAssertEqual(dropTokens, 0)

        // A second process (its own key cache) finds Ana's personal events erased, everyone else's whole.
        let log = try await wholeLog(pool, sealer: EventSealer(secret: TestDatabase.masterKey))
        let anasPersonal = log.filter { entry in
            if case .erased(let e) = entry.event { return e.owner == ana }
            return entry.event.personalDataOwner == ana
        }
        XCTAssertFalse(anasPersonal.isEmpty)
        for entry in anasPersonal {
            guard case .erased(let erased) = entry.event else { return XCTFail("\(entry.recorded.type) of the deleted user still opens") }
            XCTAssertEqual(erased.typeName, entry.recorded.type)
        }
        XCTAssertTrue(log.contains { if case .walkRequested(let w) = $0.event { w.from == ben && w.message == "Now?" } else { false } })

        // The account is gone: nothing more happens on it, and its nickname is free again.
        do {
            _ = try await handler.handle(.updateProfile(userID: ana, changes: ProfileChanges(dogName: "Max")), metadata: as_(ana))
            XCTFail("a deleted account changed its profile")
        } catch CommandError.domain(.userNotFound) {}
        let again = UUID()
        _ = try await handler.handle(.registerUser(userID: again, profile: dogProfile("u0")), metadata: as_(again))
        // Walks to the deleted user are refused: the pair was unpaired in the same transaction.
        do {
            _ = try await handler.handle(
                .sendWalk(walkID: UUID(), from: ben, to: ana, message: "Hi", latitude: 0, longitude: 0, placeName: nil),
                metadata: as_(ben)
            )
            XCTFail("a walk went to a deleted user")
        } catch CommandError.domain(.notMates) {}
        await pool.close()
    }

    /// Events this process appended come back from memory, equal to what opening gives, each
    /// once; an erased key empties that memory.
    func testRememberedEventsEqualOpenedOnesAndGoWithAnErasure() async throws {
        let (handler, pool) = try makeHandler("remembered")
        let users = try await register(2, with: handler)
        try await makeMates(users[0], users[1], with: handler)
        let sealer = EventSealer(secret: TestDatabase.masterKey)
        let walkID = UUID()
        let sent = Command.sendWalk(
            walkID: walkID,
            from: users[0],
            to: users[1],
            message: "Hi",
            latitude: 1.25,
            longitude: 2,
            placeName: nil
        )
        let walk = try await CommandHandler(log: handler.log, sealer: sealer).handle(sent, metadata: as_(users[0]))
        let records = try await pool.withConnection { try EventLog.readStream(on: $0, StreamName.walk(walkID).rawValue) }
        let opened = try await pool.withConnection { try EventSealer(secret: TestDatabase.masterKey).events(from: records, on: $0) }
        XCTAssertEqual(opened, walk.events.map(\.event))
        // Twice from the handler's sealer: first from memory, then opened; the same both times.
        for _ in 0..<2 {
            let again = try await pool.withConnection { try sealer.events(from: records, on: $0) }
            XCTAssertEqual(again, opened)
        }
        await pool.close()
    }

    /// A key made inside a transaction that rolls back (a conflict, a refusal) was never
    /// written: it must not be remembered, or events would be sealed under a key nobody has.
    func testAKeyMadeInARolledBackTransactionIsNotRemembered() async throws {
        let (_, pool) = try makeHandler("key_rollback")
        let keys = DataKeys(secret: TestDatabase.masterKey)
        let user = UUID()
        struct Rollback: Error {}
        try await pool.withConnection { connection in
            XCTAssertThrowsError(
                try connection.transaction { connection in
                    let made = try keys.entries(for: [user], creating: true, on: connection)
                    guard case .key = made[user] else { return XCTFail("no key made") }
                    throw Rollback()
                }
            )
            XCTAssertNil(keys.cached(user))
            XCTAssertTrue(try keys.entries(for: [user], creating: false, on: connection).isEmpty)
            // Made again outside a transaction, it is written and remembered.
            guard case .key(let first) = try keys.entries(for: [user], creating: true, on: connection)[user] else { return XCTFail() }
            guard
                case .key(let again) = try DataKeys(secret: TestDatabase.masterKey).entries(for: [user], creating: false, on: connection)[
                    user
                ]
            else { return XCTFail("the key was not written") }
            XCTAssertEqual(first, again)
        }
        await pool.close()
    }

    func testAnAlteredBoxDoesNotOpen() async throws {
        let (handler, pool) = try makeHandler("tamper")
        let users = try await register(1, with: handler)
        let record = try await pool.withConnection { connection in
            try EventLog.readStream(on: connection, StreamName.user(users[0]).rawValue)[0]
        }
        var altered = record
        let text = String(decoding: record.data, as: UTF8.self)
        let box = try XCTUnwrap(text.range(of: #""box": ""#))
        var chars = Array(text)
        let index = text.distance(from: text.startIndex, to: box.upperBound) + 20
        chars[index] = chars[index] == "A" ? "B" : "A"
        altered.data = Data(String(chars).utf8)
        let keys = try await pool.withConnection { try TestDatabase.sealer.keys(for: [record], on: $0) }
        XCTAssertNoThrow(try TestDatabase.sealer.event(from: record, keys: keys))
        XCTAssertThrowsError(try TestDatabase.sealer.event(from: altered, keys: keys)) {
            XCTAssertEqual($0 as? PersonalDataError, .tampered(users[0]))
        }
        // An event written in the clear (before encryption) still reads as it is.
        let clear = Event.userRegistered(
            UserRegistered(userID: UUID(), profile: dogProfile("Old"), registeredAt: Date(timeIntervalSince1970: 0))
        )
        var legacy = record
        legacy.data = clear.encodedData()
        XCTAssertEqual(try TestDatabase.sealer.event(from: legacy, keys: [:]), clear)
        await pool.close()
    }
}

/// Export and import carry a log with a deleted user: the copy rebuilds to the same read models,
/// verifies, and holds nothing of the deleted user either.
final class ErasedExportTests: XCTestCase {
    func testExportImportRebuildAndVerifyWithADeletedUser() async throws {
        let logins = try TestDatabase.createLogins("erased_export_source")
        let pool = ConnectionPool(connectionString: logins.runtime, maxConnections: 4)
        let handler = CommandHandler(log: EventLog(pool: pool), sealer: TestDatabase.sealer)
        let users = try await register(3, with: handler)
        try await makeMates(users[0], users[1], with: handler)
        try await makeMates(users[1], users[2], with: handler)
        for (from, to) in [(users[0], users[1]), (users[1], users[2]), (users[2], users[1])] {
            _ = try await handler.handle(
                .sendWalk(walkID: UUID(), from: from, to: to, message: "Walk \(from)", latitude: 3.25, longitude: 4.5, placeName: "Gate"),
                metadata: as_(from)
            )
        }
        _ = try await handler.handle(.deleteAccount(userID: users[0], partners: [users[1]], walks: []), metadata: as_(users[0]))
        await pool.close()
        let source = logins.runtime
        let rebuilt = try await RebuildJob(connectionString: logins.owner, sealer: TestDatabase.sealer).run(
            onThread: { false },
            progress: { _ in }
        )
        guard case .swapped = rebuilt else { return XCTFail("\(rebuilt)") }
        let expected = try ReadModelChecksum.compute(excluding: ReadModelChecksum.feedColumns, on: Connection(connectionString: source))

        var export = Data()
        _ = try ReplayExport.run(ReplayFilter(), on: Connection(connectionString: source)) { export.append($0) }
        XCTAssertFalse(String(decoding: export, as: UTF8.self).contains("Walk \(users[0])"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sniffmeet-erased-\(UUID()).ndjson")
        try export.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let target = try TestDatabase.create("erased_export_target")
        _ = try ReplayImport.run(try FileHandle(forReadingFrom: file), on: Connection(connectionString: target))
        let copy = try await RebuildJob(connectionString: target, sealer: TestDatabase.sealer).run(onThread: { false }, progress: { _ in })
        guard case .swapped = copy else { return XCTFail("\(copy)") }
        XCTAssertEqual(
            try ReadModelChecksum.compute(excluding: ReadModelChecksum.feedColumns, on: Connection(connectionString: target)),
            expected
        )
        for report in try Verifier(connectionString: target, sealer: EventSealer(secret: TestDatabase.masterKey)).run() {
            XCTAssertEqual(report.differingRows, 0, report.table)
        }
        // The deleted user's events fold as erased in the copy too.
        let fold = try StreamFold.run(
            stream: StreamName.user(users[0]).rawValue,
            at: nil,
            sealer: TestDatabase.sealer,
            on: Connection(connectionString: target)
        )
        XCTAssertEqual(fold.state.user?.isDeleted, true)
        XCTAssertNil(fold.state.user?.profile)
    }
}
