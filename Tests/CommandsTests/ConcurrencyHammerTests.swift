import Commands
import Domain
import EventLog
import Foundation
import Postgres
import Synchronization
import XCTest

/// 16 tasks hammer the same 10 pairs (5 users) with random mate and walk commands; afterwards
/// folding every stream from the log must show no broken rule.
final class ConcurrencyHammerTests: XCTestCase {
    func testRandomCommandsFromSixteenTasksBreakNoRule() async throws {
        let (handler, pool) = try makeHandler("hammer", pool: 24)
        let users = try await register(5, with: handler)
        let pairs = users.indices.flatMap { i in users.indices.filter { $0 > i }.map { (users[i], users[$0]) } }
        XCTAssertEqual(pairs.count, 10)
        let walks = Locked<[UUID]>([])
        let tally = Locked<[String: Int]>([:])
        let tasks = 16
        let commandsPerTask = 440

        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<commandsPerTask {
                        let (x, y) = pairs.randomElement()!
                        let (me, other) = Bool.random() ? (x, y) : (y, x)
                        var outcome = "ok"
                        do {
                            switch Int.random(in: 0..<6) {
                            case 0:
                                let token = try await handler.issueDropToken(for: other)
                                _ = try await handler.requestMate(from: me, to: other, dropToken: token.token, metadata: as_(me))
                            case 1, 2:
                                // Accept or decline whatever is pending, as a random one of the two.
                                let state = try await handler.states(of: [.mates(me, other)])[.mates(me, other)]?.mates
                                if case .pending(let requestID, _, _)? = state?.status {
                                    let command: Command =
                                        Bool.random()
                                        ? .acceptMate(requestID: requestID, pair: MatePair(me, other), by: me)
                                        : .declineMate(requestID: requestID, pair: MatePair(me, other), by: me)
                                    _ = try await handler.handle(command, metadata: as_(me))
                                } else {
                                    outcome = "nothing pending"
                                }
                            case 3:
                                _ = try await handler.handle(.unpair(by: me, mate: other), metadata: as_(me))
                            case 4:
                                let walkID = UUID()
                                _ = try await handler.handle(
                                    .sendWalk(
                                        walkID: walkID,
                                        from: me,
                                        to: other,
                                        message: "Walk?",
                                        latitude: 10,
                                        longitude: 20,
                                        placeName: nil
                                    ),
                                    metadata: as_(me)
                                )
                                walks.withLock { $0.append(walkID) }
                            default:
                                guard let walkID = walks.withLock({ $0.randomElement() }) else {
                                    outcome = "no walk yet"
                                    break
                                }
                                _ = try await handler.handle(
                                    .respondWalk(walkID: walkID, by: me, answer: Bool.random() ? .accept : .decline),
                                    metadata: as_(me)
                                )
                            }
                        } catch let error as CommandError {
                            outcome = error.code
                        }
                        tally.withLock { $0[outcome, default: 0] += 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        let counts = tally.withLock { $0 }
        print("hammer outcomes: \(counts.sorted { $0.key < $1.key })")
        XCTAssertEqual(counts.values.reduce(0, +), tasks * commandsPerTask)
        let issued = counts.filter { !["nothing pending", "no walk yet"].contains($0.key) }.values.reduce(0, +)
        XCTAssertGreaterThanOrEqual(issued, 5_000, "at least 5,000 commands reached the handler: \(counts)")
        XCTAssertGreaterThan(counts["ok"] ?? 0, 1000, "enough commands went through to mean something: \(counts)")
        XCTAssertNil(counts["conflict"], "bounded retries were enough: \(counts)")
        try await assertNoRuleBroken(pool)
        await pool.close()
    }
}

/// Folds every stream of the log and checks the rules that concurrency could break.
func assertNoRuleBroken(_ pool: ConnectionPool, file: StaticString = #filePath, line: UInt = #line) async throws {
    let log = try await wholeLog(pool)
    var byStream: [String: [(RecordedEvent, Event)]] = [:]
    for entry in log { byStream[entry.recorded.stream, default: []].append(entry) }

    for (stream, entries) in byStream {
        // Versions are gap-free and in feed order.
        XCTAssertEqual(entries.map(\.0.version), Array(1...Int64(entries.count)), "\(stream) versions", file: file, line: line)
        guard let name = StreamName(rawValue: stream) else { continue }
        var state = SniffMeet.initialState(of: name)
        for (recorded, event) in entries {
            let actor = (try? JSONSerialization.jsonObject(with: recorded.metadata) as? [String: Any])?["actor"] as? String
            switch event {
            case .mateAccepted(let accepted):
                // Only the addressee accepts (in a mutual request the second asker is the first one's addressee).
                XCTAssertEqual(actor, accepted.to.uuidString.lowercased(), "\(stream): accepted by the addressee", file: file, line: line)
            case .mateDeclined(let declined):
                XCTAssertEqual(actor, declined.to.uuidString.lowercased(), "\(stream): declined by the addressee", file: file, line: line)
            case .walkAccepted(let update), .walkDeclined(let update):
                XCTAssertEqual(actor, update.to.uuidString.lowercased(), "\(stream): answered by the addressee", file: file, line: line)
                if case .walk(let walk) = state {
                    XCTAssertEqual(walk.status, .pending, "\(stream): answered once, while pending", file: file, line: line)
                }
            default: break
            }
            state = SniffMeet.evolve(state, event)
            if case .mates(let mates) = state {
                let open = mates.requests.values.filter { $0.status == .pending }.count
                XCTAssertLessThanOrEqual(open, 1, "\(stream): at most one open request", file: file, line: line)
            }
        }
    }

    // Every walk was sent between mates, as of the pair stream version its append was conditioned on.
    for (recorded, event) in log {
        guard case .walkRequested(let walk) = event else { continue }
        let pair = StreamName.mates(walk.from, walk.to).rawValue
        let metadata = try JSONSerialization.jsonObject(with: recorded.metadata) as? [String: Any]
        guard let readVersion = (metadata?["read_versions"] as? [String: Any])?[pair] as? Int else {
            XCTFail("walk \(walk.walkID) does not record the pair version it was decided on", file: file, line: line)
            continue
        }
        let pairEvents = (byStream[pair] ?? []).prefix(readVersion).map(\.1)
        let pairState = SniffMeet.fold(StreamName.mates(walk.from, walk.to), Array(pairEvents))
        XCTAssertEqual(pairState.mates?.areMates, true, "walk \(walk.walkID) sent between non-mates", file: file, line: line)
    }
}
