import EventLog
import Foundation
import Postgres
import PostgresTesting
import XCTest

final class AppendTests: XCTestCase {
    var pool: ConnectionPool!
    var log: EventLog!

    override func setUp() async throws {
        pool = ConnectionPool(connectionString: try TestDatabase.create("append"), maxConnections: 20)
        log = EventLog(pool: pool)
    }

    override func tearDown() async throws {
        await pool?.close()
    }

    func event(_ stream: String, _ type: String = "thing_happened", _ n: Int = 0) -> NewEvent {
        NewEvent(stream: stream, type: type, data: Data(#"{"n":\#(n)}"#.utf8))
    }

    /// What decides whether an append's transaction forces generic plans.
    func testStatementsKnowWhetherTheyTakeArrays() {
        let missing: [UUID]? = nil
        XCTAssertFalse(Connection.Statement("SELECT $1, $2, $3", ["walk-1", Int64(3), Data([1, 2])]).takesArrays)
        XCTAssertFalse(Connection.Statement("SELECT $1", [Optional<String>.none]).takesArrays)
        XCTAssertTrue(Connection.Statement("SELECT $1, $2", ["walk-1", ["a", "b"]]).takesArrays)
        XCTAssertTrue(Connection.Statement("SELECT $1", [missing]).takesArrays, "a NULL array is still an array parameter")
    }

    func testAppendAndReadStreamInVersionOrder() async throws {
        let first = try await log.append(
            commandID: UUID(),
            expectations: ["dog-1": .noStream],
            events: [event("dog-1", "a", 1), event("dog-1", "b", 2)]
        )
        XCTAssertEqual(first.positions.count, 2)
        XCTAssertFalse(first.replayed)
        _ = try await log.append(commandID: nil, expectations: ["dog-1": .exactly(2)], events: [event("dog-1", "c", 3)])
        let events = try await log.readStream("dog-1")
        XCTAssertEqual(events.map(\.version), [1, 2, 3])
        XCTAssertEqual(events.map(\.type), ["a", "b", "c"])
        XCTAssertEqual(events[0].position, first.positions[0])
        XCTAssertEqual(try JSONSerialization.jsonObject(with: events[2].data) as? [String: Int], ["n": 3])
    }

    /// One to four streams are read with scalar parameters, more with arrays: both give each
    /// stream's events after its version, in version order, and an entry for every stream asked.
    func testReadingSeveralStreamsAfterTheirVersions() async throws {
        for stream in (1...6).map({ "walker-\($0)" }) {
            _ = try await log.append(
                commandID: nil,
                expectations: [stream: .noStream],
                events: (1...3).map { event(stream, "step", $0) }
            )
        }
        for count in [1, 2, 3, 4, 5, 6] {
            var asked: [String: Int64] = [:]
            for index in 1...count { asked["walker-\(index)"] = Int64(index % 4) }
            asked["nobody-\(count)"] = 0
            let question = asked
            let read = try await pool.withConnection { try EventLog.readStreams(on: $0, after: question) }
            XCTAssertEqual(Set(read.keys), Set(asked.keys), "\(count) streams")
            XCTAssertEqual(read["nobody-\(count)"]?.count, 0)
            for index in 1...count {
                let after = Int64(index % 4)
                XCTAssertEqual(read["walker-\(index)"]?.map(\.version), after < 3 ? Array((after + 1)...3) : [], "\(count) streams")
                XCTAssertTrue(read["walker-\(index)"]?.allSatisfy { $0.stream == "walker-\(index)" } ?? false)
            }
        }
    }

    func testExpectedVersionsAreEnforced() async throws {
        _ = try await log.append(commandID: nil, expectations: ["s": .noStream], events: [event("s")])
        do {
            _ = try await log.append(commandID: nil, expectations: ["s": .noStream], events: [event("s")])
            XCTFail("appending to an existing stream with noStream must fail")
        } catch EventLogError.versionConflict(let stream, _) {
            XCTAssertEqual(stream, "s")
        }
        do {
            _ = try await log.append(commandID: nil, expectations: ["t": .exactly(3)], events: [event("t")])
            XCTFail("exactly(3) on a missing stream must fail")
        } catch EventLogError.versionConflict(let stream, _) {
            XCTAssertEqual(stream, "t")
        }
        _ = try await log.append(commandID: nil, expectations: ["s": .any], events: [event("s")])
        let versions = try await log.readStream("s").map(\.version)
        XCTAssertEqual(versions, [1, 2])
    }

    func testMultiStreamAppendIsAllOrNothingAndChecksReadOnlyStreams() async throws {
        _ = try await log.append(commandID: nil, expectations: ["pair": .noStream], events: [event("pair")])
        // The condition stream moved: nothing of the command may be written.
        _ = try await log.append(commandID: nil, expectations: ["pair": .exactly(1)], events: [event("pair")])
        do {
            _ = try await log.append(
                commandID: nil,
                expectations: ["pair": .exactly(1), "walk-1": .noStream],
                events: [event("walk-1")]
            )
            XCTFail("a moved condition stream must refuse the append")
        } catch EventLogError.versionConflict(let stream, _) {
            XCTAssertEqual(stream, "pair")
        }
        let walk = try await log.readStream("walk-1")
        XCTAssertTrue(walk.isEmpty)
        let pair = try await log.readStream("pair")
        XCTAssertEqual(pair.count, 2, "a read-only condition writes nothing to its stream")
    }

    /// Two events on two streams, one each (a sign-up's user and nickname): both are written or
    /// neither, whichever of the two streams is not as expected.
    func testTwoStreamAppendWritesBothOrNeither() async throws {
        let first = try await log.append(
            commandID: nil,
            expectations: ["user-1": .noStream, "name-a": .noStream],
            events: [event("user-1", "signed_up", 1), event("name-a", "claimed", 2)]
        )
        XCTAssertEqual(first.positions.count, 2)
        XCTAssertLessThan(first.positions[0], first.positions[1], "the events keep their order in the log")
        var user = try await log.readStream("user-1")
        XCTAssertEqual(user.map(\.version), [1])
        XCTAssertEqual(user.map(\.type), ["signed_up"])
        let name = try await log.readStream("name-a")
        XCTAssertEqual(name.map(\.type), ["claimed"])
        for (taken, fresh, stale) in [("name-a", "user-2", "name-a"), ("user-1", "name-b", "user-1")] {
            do {
                _ = try await log.append(
                    commandID: nil,
                    expectations: [taken: .noStream, fresh: .noStream],
                    events: [event(taken), event(fresh)]
                )
                XCTFail("\(stale) exists: the append must be refused")
            } catch EventLogError.versionConflict(let stream, _) {
                XCTAssertEqual(stream, stale)
            }
            let written = try await log.readStream(fresh)
            XCTAssertTrue(written.isEmpty, "nothing of a refused append is written (\(fresh))")
        }
        _ = try await log.append(
            commandID: nil,
            expectations: ["user-1": .exactly(1), "name-a": .any],
            events: [event("user-1"), event("name-a")]
        )
        user = try await log.readStream("user-1")
        XCTAssertEqual(user.map(\.version), [1, 2])
        let names = try await log.readStream("name-a")
        XCTAssertEqual(names.map(\.version), [1, 2])
    }

    /// Appends of several events or streams that meet in one batch share one insert statement
    /// (`AppendPlan.insertSQL`); each keeps its own conditions there: those whose
    /// conditions hold commit, each with its events together in its order, and the others write
    /// nothing and fail as they would alone, naming their stream.
    func testAppendsSharingAnInsertEachKeepTheirOwnConditions() async throws {
        for index in 0..<10 {
            _ = try await log.append(commandID: nil, expectations: ["stale-\(index)": .noStream], events: [event("stale-\(index)")])
        }
        _ = try await log.append(commandID: nil, expectations: ["condition": .noStream], events: [event("condition")])
        enum Kind: Int, CaseIterable { case fresh, stale, conditionHolds, conditionMoved }
        let appends = (0..<40).map { index -> (expectations: [String: ExpectedVersion], events: [NewEvent]) in
            let own = "own-\(index)"
            let stale = "stale-\(index / 4)"
            return switch Kind(rawValue: index % 4)! {
            case .fresh: ([own: .noStream], [event(own, "a", index), event(own, "b", index)])
            case .stale: ([stale: .noStream], [event(stale, "a", index), event(stale, "b", index)])
            case .conditionHolds: ([own: .noStream, "condition": .exactly(1)], [event(own, "a", index), event(own, "b", index)])
            case .conditionMoved: ([own: .noStream, "condition": .exactly(2)], [event(own, "a", index), event(own, "b", index)])
            }
        }
        let log = self.log!
        let results = try await withThrowingTaskGroup(of: (Int, Result<AppendResult, EventLogError>).self) { group in
            for (index, append) in appends.enumerated() {
                group.addTask {
                    do {
                        let appended = try await log.append(commandID: UUID(), expectations: append.expectations, events: append.events)
                        return (index, .success(appended))
                    } catch let error as EventLogError {
                        return (index, .failure(error))
                    }
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        let feed = try await log.readFeed(after: .start, limit: 1_000).events
        let byID = Dictionary(uniqueKeysWithValues: feed.map { ($0.id, $0) })
        for (index, result) in results.sorted(by: { $0.key < $1.key }) {
            switch (Kind(rawValue: index % 4)!, result) {
            case (.fresh, .success(let appended)), (.conditionHolds, .success(let appended)):
                let events = appended.eventIDs.compactMap { byID[$0] }
                XCTAssertEqual(events.map(\.stream), ["own-\(index)", "own-\(index)"], "append \(index)")
                XCTAssertEqual(events.map(\.version), [1, 2], "append \(index)")
                XCTAssertEqual(events.map(\.type), ["a", "b"], "append \(index)")
                XCTAssertEqual(events.map(\.position), appended.positions, "the positions returned are the events' own (append \(index))")
                XCTAssertLessThan(appended.positions[0], appended.positions[1])
            case (.stale, .failure(.versionConflict(let stream, _))):
                XCTAssertEqual(stream, "stale-\(index / 4)")
            case (.conditionMoved, .failure(.versionConflict(let stream, _))):
                XCTAssertEqual(stream, "condition")
            default:
                XCTFail("append \(index): unexpected \(result)")
            }
        }
        // 20 appends of two events, plus the 11 written before; nothing of the 20 refused ones.
        XCTAssertEqual(feed.count, 11 + 40)
        XCTAssertEqual(Set(feed.filter { $0.stream.hasPrefix("stale-") }.map(\.version)), [1])
        let shared = Set(feed.dropFirst(11).map(\.position.transactionID))
        XCTAssertLessThan(shared.count, 20, "some appends shared a batch")
    }

    /// A condition holds at the append's place in the log: appends conditioned on a stream that
    /// another append of the same batch moves commit only before that move, never after it.
    func testConditionsHoldAgainstAMoveInTheSameBatch() async throws {
        _ = try await log.append(commandID: nil, expectations: ["gate": .noStream], events: [event("gate")])
        let appends = (0..<31).map { index -> (expectations: [String: ExpectedVersion], events: [NewEvent]) in
            // One append moves the gate (two events); thirty need it unmoved.
            index == 15
                ? (["gate": .exactly(1)], [event("gate", "closed"), event("gate", "locked")])
                : (["own-\(index)": .noStream, "gate": .exactly(1)], [event("own-\(index)"), event("own-\(index)")])
        }
        let log = self.log!
        let results = try await withThrowingTaskGroup(of: (Int, AppendResult?).self) { group in
            for (index, append) in appends.enumerated() {
                group.addTask {
                    do {
                        return (index, try await log.append(commandID: UUID(), expectations: append.expectations, events: append.events))
                    } catch EventLogError.versionConflict(let stream, _) {
                        XCTAssertEqual(stream, "gate")
                        return (index, nil)
                    }
                }
            }
            return try await group.reduce(into: [Int: AppendResult?]()) { $0[$1.0] = .some($1.1) }
        }
        let moved = try XCTUnwrap(results[15] ?? nil, "nothing else writes the gate: its move commits")
        for (index, result) in results where index != 15 {
            guard let result else { continue }
            XCTAssertLessThan(result.positions.last!, moved.positions[0], "append \(index) committed after the gate moved")
        }
        let gate = try await log.readStream("gate")
        XCTAssertEqual(gate.map(\.type), ["thing_happened", "closed", "locked"])
    }

    /// Concurrent appends with the same expected version: exactly one wins each version. Run
    /// with 1-event commands (the scalar statement) and 2-event commands (the array statement).
    func testConcurrentAppendsToOneStreamConflict() async throws {
        for size in [1, 2] {
            let stream = "race-\(size)"
            for round in Int64(0)..<10 {
                let version = round * Int64(size)
                let outcomes = try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<8 {
                        group.addTask { [log] in
                            do {
                                _ = try await log!.append(
                                    commandID: UUID(),
                                    expectations: [stream: .version(version)],
                                    events: Array(repeating: NewEvent(stream: stream, type: "x", data: Data("{}".utf8)), count: size)
                                )
                                return nil
                            } catch EventLogError.versionConflict(let conflicted, _) {
                                return conflicted
                            }
                        }
                    }
                    return try await group.reduce(into: [String?]()) { $0.append($1) }
                }
                XCTAssertEqual(
                    outcomes.filter { $0 == nil }.count,
                    1,
                    "exactly one writer wins version \(version + 1) (\(size)-event commands)"
                )
                XCTAssertEqual(outcomes.compactMap { $0 }, Array(repeating: stream, count: 7), "the losers' errors name the stream")
            }
            let versions = try await log.readStream(stream).map(\.version)
            XCTAssertEqual(versions, Array(1...Int64(10 * size)))
        }
    }

    func testRetriedCommandIDWritesNothingAndReturnsTheFirstPositions() async throws {
        let command = UUID()
        let first = try await log.append(
            commandID: command,
            expectations: ["r": .noStream],
            events: [event("r", "a"), event("r", "b")]
        )
        // Even with expectations that would now fail, the retry returns the first result.
        let again = try await log.append(
            commandID: command,
            expectations: ["r": .noStream],
            events: [event("r", "a"), event("r", "b")]
        )
        XCTAssertTrue(again.replayed)
        XCTAssertEqual(again.positions, first.positions)
        let count = try await log.readStream("r").count
        XCTAssertEqual(count, 2)
        // Concurrent retries of one new command: one append, all see the same positions.
        let command2 = UUID()
        let results = try await withThrowingTaskGroup(of: AppendResult.self) { group in
            for _ in 0..<6 {
                group.addTask { [log] in
                    try await log!.append(
                        commandID: command2,
                        expectations: ["q": .any],
                        events: [NewEvent(stream: "q", type: "x", data: Data("{}".utf8))]
                    )
                }
            }
            return try await group.reduce(into: [AppendResult]()) { $0.append($1) }
        }
        XCTAssertEqual(Set(results.map(\.positions)).count, 1)
        XCTAssertEqual(results.filter { !$0.replayed }.count, 1)
        let qCount = try await log.readStream("q").count
        XCTAssertEqual(qCount, 1)
    }

    func testTheLogRefusesUpdateDeleteAndTruncate() async throws {
        _ = try await log.append(commandID: UUID(), expectations: ["u": .noStream], events: [event("u")])
        for statement in [
            "UPDATE events SET event_type = 'forged'", "DELETE FROM events", "TRUNCATE events",
            "DELETE FROM events WHERE false",
        ] {
            do {
                try await pool.withConnection { connection in _ = try connection.execute(statement) }
                XCTFail("\(statement) must be refused")
            } catch let error as PostgresError {
                XCTAssertEqual(error.sqlState, "SM002", "\(statement): \(error)")
            }
        }
        let events = try await log.readStream("u")
        XCTAssertEqual(events.map(\.type), ["thing_happened"])
    }

    func testBadAppendArgumentsAreRefused() async throws {
        do {
            _ = try await log.append(commandID: nil, expectations: ["a": .any], events: [event("b")])
            XCTFail("a written stream missing from the expectations must be refused")
        } catch EventLogError.invalidAppend {
        }
        let count = try await log.readStream("b").count
        XCTAssertEqual(count, 0)
    }
}
