import Domain
import EventLog
import Foundation
import Postgres
import PostgresTesting
import Projections
import XCTest

/// Export, import into a fresh database, rebuild: the same read models; filters and fold.
final class ReplayTests: XCTestCase {
    func exportAll(_ h: Harness, _ filter: ReplayFilter = ReplayFilter()) async throws -> (count: Int, text: String) {
        try await h.query { c in
            var out = Data()
            let n = try ReplayExport.run(filter, on: c, batchSize: 700) { out.append($0) }
            return (n, String(decoding: out, as: UTF8.self))
        }
    }

    func testExportImportIntoAFreshDatabaseThenRebuildGivesIdenticalReadModels() async throws {
        let h = try Harness("replay_source", seed: 31, sealed: true)
        try await h.append(2000)
        let outcome = try await RebuildJob(connectionString: h.ownerConnectionString, sealer: TestDatabase.sealer).run(
            onThread: { false },
            progress: { _ in }
        )
        XCTAssertEqual(outcome, .swapped(at: h.lastPosition, events: h.appendedEvents))
        let source = try await h.query { try ReadModelChecksum.compute(excluding: ReadModelChecksum.feedColumns, on: $0) }

        let (count, text) = try await exportAll(h)
        XCTAssertEqual(count, h.appendedEvents)
        // One line per event, then one per user whose sealed data the events hold.
        let users = try await h.query { try $0.execute("SELECT count(*) FROM data_keys").first!.int(0) }
        XCTAssertGreaterThan(users, 0)
        XCTAssertEqual(text.split(separator: "\n").count, count + users)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sniffmeet-export-\(UUID()).ndjson")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let target = try TestDatabase.create("replay_target")
        let imported = try await Task.detached {
            let connection = try Connection(connectionString: target)
            return try ReplayImport.run(try FileHandle(forReadingFrom: file), on: connection)
        }.value
        XCTAssertEqual(imported, count)
        // Ids, streams, versions, data and metadata came over unchanged.
        let compare =
            "SELECT string_agg(event_id::text || stream_id || stream_version || event_type || data::text || metadata::text || recorded_at::text, ',' ORDER BY event_id) FROM events"
        let sourceEvents = try await h.query { try $0.execute(compare).first!.string(0) }
        let targetEvents = try await Task.detached { try Connection(connectionString: target).execute(compare).first!.string(0) }.value
        XCTAssertEqual(targetEvents, sourceEvents)

        let rebuilt = try await RebuildJob(connectionString: target, sealer: TestDatabase.sealer).run(
            onThread: { false },
            progress: { _ in }
        )
        guard case .swapped(_, let events) = rebuilt else { return XCTFail("\(rebuilt)") }
        XCTAssertEqual(events, count)
        let copy = try await Task.detached {
            try ReadModelChecksum.compute(excluding: ReadModelChecksum.feedColumns, on: Connection(connectionString: target))
        }.value
        XCTAssertEqual(copy, source)
        // The synthetic workload records no walk logs and writes no chat (GatewayTests' WalkLogRebuildTests,
        // ChatErasureTests and ChatRaceTests verify those).
        XCTAssertTrue(
            source.filter { $0.key != "walk_logs" && !$0.key.hasPrefix("chat_") }.values.allSatisfy { !$0.hasPrefix("0:") },
            "every table has rows: \(source)"
        )

        // A second import is refused: the log is no longer empty.
        do {
            _ = try await Task.detached {
                try ReplayImport.run(try FileHandle(forReadingFrom: file), on: Connection(connectionString: target))
            }.value
            XCTFail("imported into a non-empty log")
        } catch ProjectionError.logNotEmpty {}
    }

    func testExportFiltersByStreamTypeAndPosition() async throws {
        let h = try Harness("replay_filters", seed: 4)
        try await h.append(300)
        let walkStream = h.workload.states.keys.first { $0.kind == .walk }!.rawValue
        let (_, byStream) = try await exportAll(h, ReplayFilter(streams: [walkStream]))
        let lines = byStream.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(lines.map { $0["stream"] as! String }, Array(repeating: walkStream, count: lines.count))
        XCTAssertEqual(lines.map { $0["version"] as! Int }, Array(1...lines.count))

        let (registered, _) = try await exportAll(h, ReplayFilter(types: ["user_registered"]))
        XCTAssertEqual(registered, 60)

        let (all, text) = try await exportAll(h)
        let positions = text.split(separator: "\n").map {
            LogPosition((try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any])["position"] as! String)!
        }
        XCTAssertEqual(positions, positions.sorted())
        let (middle, _) = try await exportAll(h, ReplayFilter(from: positions[10], to: positions[19]))
        XCTAssertEqual(middle, 10)
        XCTAssertEqual(all, h.appendedEvents)
        let (none, _) = try await exportAll(h, ReplayFilter(until: Date(timeIntervalSince1970: 0)))
        XCTAssertEqual(none, 0)
    }

    func testFoldGivesAStreamsStateAsOfAPosition() async throws {
        let h = try Harness("replay_fold", seed: 17)
        try await h.append(400)
        let (name, state) = h.workload.states.first { $0.key.kind == .mates && h.workload.versions[$0.key]! >= 2 }!
        let now = try await h.query { try StreamFold.run(stream: name.rawValue, at: nil, sealer: TestDatabase.sealer, on: $0) }
        XCTAssertEqual(now.state, state)
        XCTAssertEqual(now.version, h.workload.versions[name]!)
        // As of its first event only.
        let events = try await h.log.readStream(name.rawValue)
        let first = try await h.query {
            try StreamFold.run(stream: name.rawValue, at: events[0].position, sealer: TestDatabase.sealer, on: $0)
        }
        XCTAssertEqual(first.version, 1)
        let firstEvent = try await h.query { try TestDatabase.sealer.events(from: [events[0]], on: $0)[0] }
        XCTAssertEqual(first.state, SniffMeet.fold(name, [firstEvent]))
        XCTAssertNotEqual(first.state, now.state)
    }
}
