import EventLog
import Foundation
import Postgres
import PostgresTesting
import Synchronization
import XCTest

/// The feed never skips an event: many concurrent writers, some rolling back, and a live reader.
final class FeedTests: XCTestCase {
    func testLiveReaderGetsEveryCommittedEventOnceInStreamOrder() async throws {
        let connectionString = try TestDatabase.create("feed")
        let pool = ConnectionPool(connectionString: connectionString, maxConnections: 12)
        let log = EventLog(pool: pool)
        let listener = log.startListening(connectionString: connectionString)
        defer { listener.stop() }

        let writers = 8
        let commandsPerWriter = 2_000
        let streams = (0..<40).map { "feed-\($0)" }

        // The reader follows live while the writers write.
        let received = Mutex<[RecordedEvent]>([])
        let reader = Task {
            // The loop every feed reader runs (the projection runner's): read a page after the
            // checkpoint; past a still-running older transaction look again soon; at the head
            // sleep until an append is announced (polling as the fallback).
            var checkpoint = LogPosition.start
            while !Task.isCancelled {
                let generation = log.signal.generation
                let page = try await log.readFeed(after: checkpoint, limit: 500)
                if let last = page.events.last {
                    received.withLock { $0.append(contentsOf: page.events) }
                    checkpoint = last.position
                }
                if page.full { continue }
                if page.pendingBeyondHorizon {
                    try await Task.sleep(for: .milliseconds(5))
                    continue
                }
                await log.signal.wait(since: generation, timeout: .milliseconds(500))
            }
        }

        let committed = try await withThrowingTaskGroup(of: [UUID].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var mine: [UUID] = []
                    var generator = SystemRandomNumberGenerator()
                    for n in 0..<commandsPerWriter {
                        let stream = streams.randomElement(using: &generator)!
                        let events = (0..<Int.random(in: 1...3, using: &generator)).map { index in
                            NewEvent(stream: stream, type: "tick", data: Data(#"{"writer":\#(writer),"n":\#(n),"i":\#(index)}"#.utf8))
                        }
                        let rollBack = n % 10 == 7
                        let twoSteps = n % 3 == 1
                        var other = streams.randomElement(using: &generator)!
                        while other == stream { other = streams.randomElement(using: &generator)! }
                        let second = other
                        var ids: [UUID] = []
                        while true {
                            do {
                                ids = try await pool.withConnection { connection in
                                    try connection.execute("BEGIN")
                                    do {
                                        var result = try EventLog.append(
                                            on: connection,
                                            commandID: UUID(),
                                            expectations: [stream: .any],
                                            events: events
                                        )
                                        if twoSteps {
                                            // A second append in the same transaction, to another stream: this
                                            // transaction's id is already fixed, the trap DESIGN.md warns about.
                                            let more = [NewEvent(stream: second, type: "tock", data: Data("{}".utf8))]
                                            result.eventIDs += try EventLog.append(
                                                on: connection,
                                                commandID: nil,
                                                expectations: [second: .any],
                                                events: more
                                            ).eventIDs
                                        }
                                        try connection.execute(rollBack ? "ROLLBACK" : "COMMIT")
                                        return result.eventIDs
                                    } catch {
                                        _ = try? connection.execute("ROLLBACK")
                                        throw error
                                    }
                                }
                                break
                            } catch EventLogError.versionConflict {
                                continue  // a younger transaction wrote the stream first: retry
                            }
                        }
                        if !rollBack {
                            log.announceCommitted()
                            mine += ids
                        }
                    }
                    return mine
                }
            }
            return try await group.reduce(into: [UUID]()) { $0 += $1 }
        }

        // Wait until the reader has seen as many events as were committed (bounded).
        let deadline = ContinuousClock.now + .seconds(60)
        while received.withLock({ $0.count }) < committed.count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        // Give a wrong reader a chance to over-deliver before checking.
        try await Task.sleep(for: .milliseconds(300))
        reader.cancel()
        _ = try? await reader.value
        await pool.close()

        let events = received.withLock { $0 }
        XCTAssertEqual(events.count, committed.count, "every committed event exactly once")
        XCTAssertEqual(Set(events.map(\.id)).count, events.count, "no event twice")
        XCTAssertEqual(Set(events.map(\.id)), Set(committed), "no rolled-back event, none missing")
        var lastVersion: [String: Int64] = [:]
        for event in events {
            XCTAssertEqual(event.version, (lastVersion[event.stream] ?? 0) + 1, "\(event.stream) in version order")
            lastVersion[event.stream] = event.version
        }
        XCTAssertGreaterThan(committed.count, writers * commandsPerWriter * 8 / 10)
    }

    /// A page read without bodies holds every head of the full page and no data or metadata;
    /// `data(at:)` reads each event's data as the full page has it.
    func testAPageWithoutBodiesHasTheSameHeadsAndItsDataIsReadByPosition() async throws {
        let pool = ConnectionPool(connectionString: try TestDatabase.create("feed_heads"))
        let log = EventLog(pool: pool)
        for n in 0..<5 {
            _ = try await log.append(
                commandID: UUID(),
                expectations: ["heads-\(n % 2)": .any],
                events: [
                    NewEvent(stream: "heads-\(n % 2)", type: "tick", data: Data(#"{"n": \#(n)}"#.utf8), metadata: Data(#"{"m": 1}"#.utf8))
                ]
            )
        }
        let (full, heads, data) = try await pool.withConnection { connection in
            let full = try EventLog.readFeed(on: connection, after: .start, limit: 100)
            let heads = try EventLog.readFeed(on: connection, after: .start, limit: 100, bodies: false)
            return (full, heads, try EventLog.data(at: heads.events.map(\.position.position) + [999_999], on: connection))
        }
        await pool.close()
        XCTAssertEqual(full.events.count, 5)
        XCTAssertEqual(heads.events.map(\.id), full.events.map(\.id))
        XCTAssertEqual(heads.events.map(\.position), full.events.map(\.position))
        XCTAssertEqual(heads.events.map(\.stream), full.events.map(\.stream))
        XCTAssertEqual(heads.events.map(\.version), full.events.map(\.version))
        XCTAssertEqual(heads.events.map(\.recordedAt), full.events.map(\.recordedAt))
        XCTAssertTrue(heads.events.allSatisfy { $0.data.isEmpty && $0.metadata.isEmpty })
        XCTAssertTrue(full.events.allSatisfy { !$0.data.isEmpty && !$0.metadata.isEmpty })
        XCTAssertEqual(data.count, 5, "an unknown position is simply absent")
        for event in full.events { XCTAssertEqual(data[event.position.position], event.data) }
    }
}
