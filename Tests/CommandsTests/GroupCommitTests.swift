import Commands
import Domain
import EventLog
import Foundation
import Postgres
import Synchronization
import XCTest

/// Commands raced through the log's group commit: those that break a rule or lose a race write
/// nothing, the others commit, and they do share transactions.
final class GroupCommitTests: XCTestCase {
    func testRacingCommandsCommitTogetherAndTheRefusedOnesWriteNothing() async throws {
        let (handler, pool) = try makeHandler("group-commit", pool: 8)
        defer { Task { await pool.close() } }
        let users = try await register(8, with: handler)
        try await makeMates(users[0], users[1], with: handler)
        try await makeMates(users[2], users[3], with: handler)
        // One pending walk that ten answers race for.
        let contested = UUID()
        _ = try await handler.handle(
            .sendWalk(
                walkID: contested,
                from: users[0],
                to: users[1],
                message: "Now?",
                latitude: 1,
                longitude: 2,
                placeName: nil
            ),
            metadata: as_(users[0])
        )
        let before = try await wholeLog(pool).count

        enum Step: Sendable {
            case walk(UUID, from: UUID, to: UUID, mates: Bool)
            case answer(Int)
        }
        var steps: [Step] = []
        for index in 0..<40 {
            // Half to a mate (committed), half to a stranger (refused: not_mates).
            let (from, to, mates) =
                index % 2 == 0
                ? (users[index % 4], users[index % 4 ^ 1], true)
                : (users[4 + index % 4], users[4 + (index % 4 ^ 1)], false)
            steps.append(.walk(UUID(), from: from, to: to, mates: mates))
        }
        steps += (0..<10).map { Step.answer($0) }
        steps.shuffle()

        let results = try await withThrowingTaskGroup(of: (Step, String).self) { group in
            for step in steps {
                group.addTask {
                    do {
                        switch step {
                        case .walk(let id, let from, let to, _):
                            _ = try await handler.handle(
                                .sendWalk(
                                    walkID: id,
                                    from: from,
                                    to: to,
                                    message: "Walk?",
                                    latitude: 10,
                                    longitude: 20,
                                    placeName: nil
                                ),
                                metadata: as_(from)
                            )
                        case .answer(let index):
                            _ = try await handler.handle(
                                .respondWalk(walkID: contested, by: users[1], answer: index % 2 == 0 ? .accept : .decline),
                                metadata: as_(users[1])
                            )
                        }
                        return (step, "ok")
                    } catch let error as CommandError {
                        return (step, error.code)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        // Every walk to a mate committed; every walk to a stranger was refused and left no stream.
        var committed: Set<UUID> = []
        var refused: Set<UUID> = []
        var answers: [(answer: WalkAnswer, outcome: String)] = []
        for (step, outcome) in results {
            switch step {
            case .walk(let id, _, _, let mates):
                XCTAssertEqual(outcome, mates ? "ok" : "not_mates")
                if mates { committed.insert(id) } else { refused.insert(id) }
            case .answer(let index): answers.append((index % 2 == 0 ? .accept : .decline, outcome))
            }
        }
        XCTAssertEqual(committed.count, 20)
        // One answer wins; the same answer again is a no-op, the other one is refused.
        let winner = try await handler.states(of: [.walk(contested)])[.walk(contested)]?.walk?.answer
        XCTAssertNotNil(winner)
        for (answer, outcome) in answers { XCTAssertEqual(outcome, answer == winner ? "ok" : "already_answered") }

        let log = try await wholeLog(pool)
        let new = Array(log.dropFirst(before))
        XCTAssertEqual(new.count, 21, "20 walks and one answer, nothing else")
        let walkStreams = Set(new.map(\.recorded.stream))
        XCTAssertEqual(walkStreams, Set(committed.map { StreamName.walk($0).rawValue } + [StreamName.walk(contested).rawValue]))
        XCTAssertTrue(walkStreams.isDisjoint(with: refused.map { StreamName.walk($0).rawValue }))

        // Group commit happened: the committed commands share fewer transactions than there are commands.
        let transactions = Set(new.map(\.recorded.position.transactionID))
        XCTAssertLessThan(transactions.count, new.count, "no two commands shared a transaction")
    }

    /// At the log's level: appends in one batch that expect the same stream version, so only
    /// the first can hold; the others fail with a conflict and none of their events is written.
    func testConflictingAppendsInOneBatchLeaveOnlyTheWinner() async throws {
        let (handler, pool) = try makeHandler("group-commit-log", pool: 8)
        defer { Task { await pool.close() } }
        let log = handler.log
        let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<60 {
                group.addTask {
                    // Even: all on "contested" at version 0; odd: each on a stream of its own.
                    let stream = index % 2 == 0 ? "contested" : "own-\(index)"
                    do {
                        _ = try await log.append(
                            commandID: UUID(),
                            expectations: [stream: .noStream],
                            events: [
                                NewEvent(stream: stream, type: "thing_happened", data: Data(#"{"n":\#(index)}"#.utf8)),
                                NewEvent(stream: stream, type: "thing_happened", data: Data("{}".utf8)),
                            ]
                        )
                        return (index, true)
                    } catch EventLogError.versionConflict(let conflicted, _) {
                        XCTAssertEqual(conflicted, "contested")
                        return (index, false)
                    }
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        XCTAssertTrue(outcomes.filter { $0.key % 2 == 1 }.allSatisfy(\.value), "every append on its own stream commits")
        let winners = outcomes.filter { $0.key % 2 == 0 && $0.value }.map(\.key)
        XCTAssertEqual(winners.count, 1)
        let contested = try await log.readStream("contested")
        XCTAssertEqual(contested.map(\.version), [1, 2], "the winner's two events, nobody else's")
        XCTAssertEqual(String(decoding: contested[0].data, as: UTF8.self).replacingOccurrences(of: " ", with: ""), #"{"n":\#(winners[0])}"#)
        let all = try await wholeLog(pool: pool)
        XCTAssertEqual(all.count, 62)
        XCTAssertLessThan(Set(all.map(\.position.transactionID)).count, 31, "no two appends shared a transaction")
    }

    /// Single-event appends conditioned on a read-only stream (the shape of a walk request or a
    /// chat message on its pair) share one insert per batch, and each keeps its own conditions:
    /// those that read the pair at the version it has commit, those that read an older one write
    /// nothing, and of those racing for one stream only one wins.
    func testSingleEventAppendsShareTheirInsertAndKeepTheirOwnConditions() async throws {
        let (handler, pool) = try makeHandler("group-commit-single", pool: 8)
        defer { Task { await pool.close() } }
        let log = handler.log
        for _ in 0..<2 {
            _ = try await log.append(
                commandID: UUID(),
                expectations: ["pair": .any],
                events: [NewEvent(stream: "pair", type: "paired", data: Data("{}".utf8))]
            )
        }
        let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<90 {
                group.addTask {
                    // 0 mod 3: all on "contested", new; 1 mod 3: their own stream, the pair as it
                    // is; 2 mod 3: their own stream, the pair as it was (stale).
                    let stream = index % 3 == 0 ? "contested" : "own-\(index)"
                    let pairVersion: Int64 = index % 3 == 2 ? 1 : 2
                    do {
                        _ = try await log.append(
                            commandID: UUID(),
                            expectations: [stream: .noStream, "pair": .exactly(pairVersion)],
                            events: [NewEvent(stream: stream, type: "thing_happened", data: Data(#"{"n":\#(index)}"#.utf8))]
                        )
                        return (index, true)
                    } catch EventLogError.versionConflict {
                        return (index, false)
                    }
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        XCTAssertTrue(outcomes.filter { $0.key % 3 == 1 }.allSatisfy(\.value), "every append reading the pair as it is commits")
        XCTAssertTrue(outcomes.filter { $0.key % 3 == 2 }.allSatisfy { !$0.value }, "every append reading a stale pair is refused")
        let winners = outcomes.filter { $0.key % 3 == 0 && $0.value }.map(\.key)
        XCTAssertEqual(winners.count, 1)
        let contested = try await log.readStream("contested")
        XCTAssertEqual(contested.map(\.version), [1])
        XCTAssertEqual(String(decoding: contested[0].data, as: UTF8.self).replacingOccurrences(of: " ", with: ""), #"{"n":\#(winners[0])}"#)
        let all = try await wholeLog(pool: pool)
        XCTAssertEqual(all.count, 2 + 1 + 30, "the pair's events, the winner's, and one per fresh own stream")
        XCTAssertEqual(Set(all.filter { $0.stream.hasPrefix("own-") }.map(\.stream)).count, 30)
        XCTAssertTrue(all.allSatisfy { $0.stream == "pair" || $0.version == 1 })
        XCTAssertLessThan(Set(all.map(\.position.transactionID)).count, 2 + 31, "no two appends shared a transaction")
    }

    /// A guarded table of its own statement (`GuardedTable(sql:columns:)`, as the drop tokens'
    /// spend is) writes only where its own append wrote: the losers of a race on one stream,
    /// batched with the winner, leave no row behind.
    func testAGuardedStatementOfItsOwnWritesOnlyWithItsOwnAppend() async throws {
        let (handler, pool) = try makeHandler("group-commit-guarded", pool: 8)
        defer { Task { await pool.close() } }
        let log = handler.log
        let markers = GuardedTable(
            sql: """
                WITH written AS (
                    INSERT INTO message_keys (message_id, sender, sealed_key)
                    SELECT r.marker, r.marker, decode(repeat('00', 60), 'hex')
                    FROM unnest($1::uuid[], $2::uuid[]) AS r(appended, marker)
                    WHERE \(GuardedTable.rowAppendedHere)
                    RETURNING 1
                )
                SELECT count(*) FROM written
                """,
            columns: 1
        )
        let outcomes = try await Self.raceOnOneStream(log) { stream, commandID, marker in
            AppendRequest(
                commandID: commandID,
                expectations: [stream: .noStream],
                events: [NewEvent(stream: stream, type: "thing_happened", data: Data("{}".utf8))],
                guardedRows: [GuardedRow(markers, appended: EventLog.eventIDs(commandID: commandID, count: 1)[0], values: [marker])]
            )
        }
        XCTAssertEqual(outcomes.values.filter { $0 }.count, 21, "20 own streams and one winner on the contested one")
        let rows = try await pool.withConnection { connection in
            try connection.execute("SELECT message_id FROM message_keys").rows.map { try $0.uuid(0) }
        }
        XCTAssertEqual(Set(rows), Set(outcomes.filter(\.value).map(\.key)))
    }

    /// Guarded rows, gathered per table into one insert for the whole batch, still commit only
    /// with their own append: the losers of a race on one stream leave no row in either table,
    /// and the winners' rows shared their batches' transactions.
    func testGuardedRowsCommitOnlyWithTheirOwnAppend() async throws {
        let (handler, pool) = try makeHandler("group-commit-rows", pool: 8)
        defer { Task { await pool.close() } }
        let log = handler.log
        let messageKeys = GuardedTable(
            "message_keys",
            columns: [("message_id", "uuid"), ("sender", "uuid"), ("sealed_key", "bytea")]
        )
        let dataKeys = GuardedTable(
            "data_keys",
            columns: [("user_id", "uuid"), ("sealed_key", "bytea")]
        )
        let sealed = Data(repeating: 0xab, count: 60)
        let outcomes = try await Self.raceOnOneStream(log) { stream, commandID, marker in
            let eventID = EventLog.eventIDs(commandID: commandID, count: 1)[0]
            return AppendRequest(
                commandID: commandID,
                expectations: [stream: .noStream],
                events: [NewEvent(stream: stream, type: "thing_happened", data: Data("{}".utf8))],
                guardedRows: [
                    GuardedRow(messageKeys, appended: eventID, values: [marker, marker, sealed]),
                    GuardedRow(dataKeys, appended: eventID, values: [marker, sealed]),
                ]
            )
        }
        let winners = Set(outcomes.filter(\.value).map(\.key))
        XCTAssertEqual(winners.count, 21, "20 own streams and one winner on the contested one")
        let (messages, users, transactions) = try await pool.withConnection { connection in
            (
                try connection.execute("SELECT message_id FROM message_keys WHERE sender = message_id").rows.map { try $0.uuid(0) },
                try connection.execute("SELECT user_id FROM data_keys WHERE octet_length(sealed_key) = 60").rows.map { try $0.uuid(0) },
                try connection.execute("SELECT count(DISTINCT xmin::text) FROM message_keys").first!.int(0)
            )
        }
        XCTAssertEqual(Set(messages), winners)
        XCTAssertEqual(Set(users), winners)
        XCTAssertLessThan(transactions, winners.count, "some batch wrote the rows of several appends")
    }

    /// `committed` is told of exactly the appends that committed, with their stored ids, by the
    /// time each is answered; not of a refused one, nor of a replay of an id already appended.
    func testCommittedIsToldOfEveryCommittedAppendBeforeItIsAnswered() async throws {
        let (handler, pool) = try makeHandler("group-commit-told", pool: 8)
        defer { Task { await pool.close() } }
        let log = handler.log
        let told = Mutex<[UUID: [UUID]]>([:])
        let answeredUntold = Mutex(0)
        let commandIDs = Mutex<[UUID: UUID]>([:])
        let outcomes = try await Self.raceOnOneStream(log) { stream, commandID, marker in
            commandIDs.withLock { $0[marker] = commandID }
            return AppendRequest(
                commandID: commandID,
                expectations: [stream: .noStream],
                events: [NewEvent(stream: stream, type: "thing_happened", data: Data("{}".utf8))],
                committed: { appended in told.withLock { $0[marker] = appended.eventIDs } }
            )
        }
        for (marker, written) in outcomes {
            let ids = told.withLock { $0[marker] }
            if written {
                let commandID = commandIDs.withLock { $0[marker]! }
                XCTAssertEqual(ids, EventLog.eventIDs(commandID: commandID, count: 1), "told with the stored ids")
            } else {
                XCTAssertNil(ids, "a refused append is not told")
            }
        }
        XCTAssertEqual(told.withLock { $0.count }, 21)
        // A replay of a committed command id: answered with the first run's ids, not told.
        let (marker, commandID) = commandIDs.withLock { $0.first { outcomes[$0.key] == true }! }
        let replay = try await log.append(
            AppendRequest(
                commandID: commandID,
                expectations: ["replayed": .any],
                events: [NewEvent(stream: "replayed", type: "thing_happened", data: Data("{}".utf8))],
                committed: { _ in answeredUntold.withLock { $0 += 1 } }
            )
        )
        XCTAssertTrue(replay.appended.replayed)
        XCTAssertEqual(replay.appended.eventIDs, told.withLock { $0[marker] })
        XCTAssertEqual(answeredUntold.withLock { $0 }, 0)
    }

    /// 40 appends at once, every other one to the stream "contested" (one wins it), the rest each
    /// to a stream of its own: whether each append, named by its marker, was written.
    static func raceOnOneStream(
        _ log: EventLog,
        _ request: @escaping @Sendable (_ stream: String, _ commandID: UUID, _ marker: UUID) -> AppendRequest
    ) async throws -> [UUID: Bool] {
        try await withThrowingTaskGroup(of: (UUID, Bool).self) { group in
            for index in 0..<40 {
                group.addTask {
                    let marker = UUID()
                    do {
                        _ = try await log.append(request(index % 2 == 0 ? "contested" : "own-\(index)", UUID(), marker))
                        return (marker, true)
                    } catch EventLogError.versionConflict {
                        return (marker, false)
                    }
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
    }

    /// Appends in one batch share one read of the streams their answers show: each gets exactly
    /// its streams' events past the version it said it knows, whatever the others asked.
    func testBatchedAppendsEachGetTheirOwnReads() async throws {
        let (handler, pool) = try makeHandler("group-commit-reads", pool: 8)
        defer { Task { await pool.close() } }
        let log = handler.log
        for index in 1...3 {
            _ = try await log.append(
                commandID: UUID(),
                expectations: ["card-a": index == 1 ? .noStream : .exactly(Int64(index - 1))],
                events: [NewEvent(stream: "card-a", type: "thing_happened", data: Data(#"{"n":\#(index)}"#.utf8))]
            )
        }
        let results = try await withThrowingTaskGroup(of: (Int, GroupAppendResult).self) { group in
            for index in 0..<40 {
                group.addTask {
                    let known = Int64(index % 4)
                    let result = try await log.append(
                        AppendRequest(
                            commandID: UUID(),
                            expectations: ["own-\(index)": .noStream],
                            events: [NewEvent(stream: "own-\(index)", type: "thing_happened", data: Data("{}".utf8))],
                            reads: index % 5 == 0 ? [:] : ["card-a": known, "card-b": 0]
                        )
                    )
                    return (index, result)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        for (index, result) in results {
            if index % 5 == 0 {
                XCTAssertTrue(result.reads.isEmpty, "nothing asked, nothing read")
                continue
            }
            let known = Int64(index % 4)
            XCTAssertEqual(result.reads["card-a"]?.map(\.version), Array(stride(from: known + 1, through: 3, by: 1)), "append \(index)")
            XCTAssertEqual(result.reads["card-b"]?.count, 0, "an empty stream asked for is there, empty")
        }
        let transactions = Set(results.values.map(\.appended.positions.last!.transactionID))
        XCTAssertLessThan(transactions.count, 40, "some appends shared a batch")
    }
}

/// Every recorded event, in feed order (without decoding: these are not domain events).
private func wholeLog(pool: ConnectionPool) async throws -> [RecordedEvent] {
    try await pool.withConnection { connection in try EventLog.readFeed(on: connection, after: .start, limit: 10_000).events }
}
