import Domain
import EventLog
import Foundation
import PostgresTesting
import UUIDText
import XCTest

@testable import Commands

/// `sniffmeet upgrade nicknames` on the real database, with legacy streams written as the code
/// before keyed nickname stream names wrote them: events in the clear, `nickname-<name>` streams.
final class NicknameUpgradeTests: XCTestCase {
    let at = Date(timeIntervalSince1970: 1_700_000_000)

    /// One legacy command's append: its events in the clear, each stream at its next version.
    func appendLegacy(_ log: EventLog, command: String, _ events: [(stream: String, event: Event)]) async throws {
        let commandID = UUID()
        var expectations: [String: ExpectedVersion] = [:]
        for stream in Set(events.map(\.stream)) {
            let version = try await log.readStream(stream).last?.version ?? 0
            expectations[stream] = .version(version)
        }
        let metadata = Data(
            #"{"command": "\#(command)", "command_id": "\#(commandID.lowercasedString)", "correlation_id": "\#(commandID.lowercasedString)", "schema_version": 1}"#
                .utf8
        )
        _ = try await log.append(
            commandID: commandID,
            expectations: expectations,
            events: events.map { NewEvent(stream: $0.stream, type: $0.event.typeName, data: $0.event.encodedData(), metadata: metadata) }
        )
    }

    func legacySignUp(_ log: EventLog, _ user: UUID, _ nickname: String) async throws {
        try await appendLegacy(
            log,
            command: "RegisterUser",
            [
                (
                    "user-\(user.lowercasedString)",
                    .userRegistered(UserRegistered(userID: user, profile: dogProfile(nickname), registeredAt: at))
                ),
                (
                    "nickname-\(nickname.lowercased())",
                    .nicknameReserved(NicknameClaim(nickname: nickname.lowercased(), userID: user, at: at))
                ),
            ]
        )
    }

    func testUpgradeReservesLegacyNicknamesOnceAndResumes() async throws {
        let (handler, pool) = try makeHandler("nickupgrade")
        let log = handler.log
        let (rex, max, mover, dup, taker) = (UUID(), UUID(), UUID(), UUID(), UUID())
        try await legacySignUp(log, rex, "Rex")
        try await legacySignUp(log, max, "Max")
        try await legacySignUp(log, dup, "Dup")
        // A legacy change of nickname: the old legacy stream released, the new one reserved.
        try await legacySignUp(log, mover, "Old")
        try await appendLegacy(
            log,
            command: "UpdateProfile",
            [
                (
                    "user-\(mover.lowercasedString)",
                    .profileUpdated(ProfileUpdated(userID: mover, profile: dogProfile("Neu"), updatedAt: at))
                ),
                ("nickname-old", .nicknameReleased(NicknameClaim(nickname: "old", userID: mover, at: at))),
                ("nickname-neu", .nicknameReserved(NicknameClaim(nickname: "neu", userID: mover, at: at))),
            ]
        )
        // What the upgrade is for: today a second user can take a nickname held only in a legacy stream.
        _ = try await handler.handle(.registerUser(userID: taker, profile: dogProfile("DUP")), metadata: as_(taker))
        // A user of the current code has no legacy stream.
        _ = try await register(1, with: handler)

        // Killed halfway: the first stream done, then the whole run again.
        let upgrade = NicknameUpgrade(handler: handler)
        let dupFirst = try await upgrade.upgrade("nickname-dup")
        XCTAssertEqual(dupFirst, .conflict(user: dup))
        let maxFirst = try await upgrade.upgrade("nickname-max")
        XCTAssertEqual(maxFirst, .reserved(user: max))
        var progress: [String] = []
        let report = try await upgrade.run { done, total, stream, _ in progress.append("\(done)/\(total) \(stream)") }
        XCTAssertEqual(progress, ["1/5 nickname-dup", "2/5 nickname-max", "3/5 nickname-neu", "4/5 nickname-old", "5/5 nickname-rex"])
        XCTAssertEqual(
            report.outcomes.map(\.outcome),
            [.conflict(user: dup), .unchanged, .reserved(user: mover), .unchanged, .reserved(user: rex)]
        )
        XCTAssertEqual(report.conflicts.map(\.stream), ["nickname-dup"])

        // Every legacy nickname is now protected on its keyed stream.
        for (nickname, holder) in [("REX", rex), ("max", max), ("neu", mover)] {
            let intruder = UUID()
            do {
                _ = try await handler.handle(.registerUser(userID: intruder, profile: dogProfile(nickname)), metadata: as_(intruder))
                XCTFail("\(nickname) was free")
            } catch CommandError.domain(.nicknameTaken) {}
            let state = try await handler.states(of: [.nickname(nickname)])[.nickname(nickname)]
            XCTAssertEqual(state?.nickname?.holder, holder)
        }
        // The released legacy nickname is free.
        let newcomer = UUID()
        _ = try await handler.handle(.registerUser(userID: newcomer, profile: dogProfile("old")), metadata: as_(newcomer))

        // A second run appends nothing.
        let events = try await pool.withConnection { try $0.execute("SELECT count(*) FROM events").first!.int(0) }
        let again = try await upgrade.run()
        XCTAssertEqual(again.outcomes.map(\.outcome), [.conflict(user: dup), .unchanged, .unchanged, .unchanged, .unchanged])
        let after = try await pool.withConnection { try $0.execute("SELECT count(*) FROM events").first!.int(0) }
        XCTAssertEqual(after, events)
        // The reservations are sealed like any other: the keyed streams name no nickname.
        let clear = try await pool.withConnection {
            try $0.execute("SELECT count(*) FROM events WHERE event_type = 'nickname_reserved' AND data::text LIKE '%\"rex\"%'").first!.int(
                0
            )
        }
        XCTAssertEqual(clear, 1, "only the legacy event holds it in the clear")
        await pool.close()
    }
}
