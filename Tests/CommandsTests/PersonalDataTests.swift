import Commands
import Domain
import EventLog
import Foundation
import PersonalData
import Postgres
import PostgresTesting
import XCTest

/// The log's edge for personal data: what the log holds of a user is sealed under their key,
/// and once the account is deleted, that key is gone and nothing of theirs opens again.
final class PersonalDataTests: XCTestCase {
    func testPersonalFieldsEnterTheLogOnlySealedAndOpenBackWhole() async throws {
        let (handler, pool) = try makeHandler("sealed_log")
        let users = try await register(2, with: handler)
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
        for text in ["u0", "u1", "Bello", "Quokka", "37.123457", "127.654321"] {
            XCTAssertFalse(stored.contains(text), "the log holds \(text) in the clear")
        }
        // Nickname streams are named by a keyed hash, never by the nickname.
        XCTAssertEqual(TestDatabase.sealer.storedName(.nickname("U0")), TestDatabase.sealer.storedName(.nickname("u0")))
        XCTAssertNotEqual(TestDatabase.sealer.storedName(.nickname("u0")), TestDatabase.sealer.storedName(.nickname("u1")))
        XCTAssertTrue(stored.contains(TestDatabase.sealer.storedName(.nickname("u0"))))
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
