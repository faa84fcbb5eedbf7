import APNsDouble
@preconcurrency import Crypto
import Foundation
import Gateway
import XCTest

/// `serve` stopping while pushes are in flight. `kill -9`, then a new process: every entry still
/// reaches its device at least once; duplicates can only come from the pushes APNs had answered
/// but the dead process had not yet recorded, and they are counted. A graceful stop (SIGTERM):
/// the process finishes and records every batch it claimed before it exits, so nothing waits out
/// a lease and nothing goes twice.
final class PushCrashTests: XCTestCase {
    func testKillNineWhilePushesAreInFlightLosesNoneAndCountsDuplicates() async throws {
        let (double, key) = try await PushTests.startDouble()
        let environment = try Self.serveEnvironment(double: double, key: key)
        // This process only takes the commands; the serve process projects and pushes.
        let fixture = try GatewayFixture("push_crash", background: [])
        let first = try ServeProcess.start(fixture, environment: environment)
        let restarted = RestartedServer()
        defer {
            first.stop()
            restarted.server?.stop()
        }
        try await fixture.run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben")
            let benPhone2 = try await client.secondPhone(ben)
            try await PushTests.register(client, ben.token, PushTests.deviceToken(0xB1), locale: "ko")
            try await PushTests.register(client, benPhone2, PushTests.deviceToken(0xB2), locale: "en")
            try await client.makeMates(ana, ben)
            try await first.waitUntilReady()
            var window = 0
            // 1,000 walks to Ben's two phones: 2,000 pushes (plus 2 for the mate request).
            for index in 0..<1000 {
                let walk = try await client.send(
                    .post,
                    "/v1/walks",
                    token: ana.token,
                    json: WalkRoutesTests.walk(to: ben, message: "Walk \(index)")
                )
                XCTAssertEqual(walk.status, 201)
                if index == 400 {
                    try await PushTests.eventually("pushes flowing") { double.deliveries.count >= 200 }
                    let before = double.deliveries.count
                    first.kill()
                    // The in-flight window: rows the dead process had claimed and not yet recorded.
                    window =
                        Int(
                            try client.sql(
                                "SELECT count(*) FROM push_outbox WHERE state IN ('pending', 'retrying') AND claimed_until IS NOT NULL"
                            )[0][0] ?? "0"
                        ) ?? 0
                    print("PushCrashTests: serve killed with kill -9 after \(before) deliveries, \(window) pushes in flight")
                    let second = try ServeProcess.start(fixture, environment: environment)
                    restarted.server = second
                    try await second.waitUntilReady()
                }
            }
            let expected = 2002
            let start = ContinuousClock.now
            while Self.distinctPushes(double.deliveries).count < expected,
                ContinuousClock.now - start < .seconds(120)
            {
                try await Task.sleep(for: .milliseconds(100))
            }
            let deliveries = double.deliveries
            let distinct = Self.distinctPushes(deliveries)
            XCTAssertEqual(distinct.count, expected, "pushes lost")
            let duplicates = deliveries.count - distinct.count
            print(
                "PushCrashTests: \(distinct.count) entries delivered to every device, \(duplicates) duplicates, in-flight window \(window)"
            )
            XCTAssertLessThanOrEqual(duplicates, window, "a push outside the killed process's in-flight window went twice")
            // And the outbox says so (the last outcomes are recorded moments after their 200).
            var recorded = ""
            for _ in 0..<100 {
                recorded = try client.sql("SELECT count(*) FROM push_outbox WHERE state = 'delivered'")[0][0] ?? ""
                if recorded == String(expected) { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            XCTAssertEqual(recorded, String(expected))
        }
        try await double.stop()
    }
    /// The pushes the double accepted, each once: entry (collapse id) and device.
    static func distinctPushes(_ deliveries: [APNsDouble.Delivery]) -> Set<String> {
        Set(deliveries.map { "\($0.headers["apns-collapse-id"]!)/\($0.deviceToken)" })
    }

    /// What a `serve` process needs to push to `double` with `key`.
    static func serveEnvironment(double: APNsDouble, key: P256.Signing.PrivateKey) throws -> [String: String] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("push-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let keyFile = folder.appendingPathComponent("AuthKey.p8")
        let caFile = folder.appendingPathComponent("double.pem")
        try key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        try APNsDouble.certificatePEM.write(to: caFile, atomically: true, encoding: .utf8)
        return [
            "SNIFFMEET_APNS_KEY_FILE": keyFile.path, "SNIFFMEET_APNS_KEY_ID": PushTests.keyID,
            "SNIFFMEET_APNS_TEAM_ID": PushTests.teamID, "SNIFFMEET_APNS_TOPIC": PushTests.topic,
            "SNIFFMEET_APNS_URL": double.url, "SNIFFMEET_APNS_CA_FILE": caFile.path, "SNIFFMEET_PUSH_LEASE_SECONDS": "20",
            // Batches a debug build answers well inside the lease's deadline (14 s) even while the
            // rest of the suite runs beside it: a push answered after it would be retried, and
            // counted as a duplicate outside the window.
            "SNIFFMEET_PUSH_CONCURRENCY": "50",
        ]
    }

    func testAStoppingServeRecordsEveryPushItClaimedBeforeItExits() async throws {
        let (double, key) = try await PushTests.startDouble()
        // A slow APNs: four loops of 50, each answer 2 s after its request, so that batches are
        // in flight when the stop comes.
        double.answerAfter(.seconds(2))
        let environment = try Self.serveEnvironment(double: double, key: key)
        let fixture = try GatewayFixture("push_stop", background: [])
        let first = try ServeProcess.start(fixture, environment: environment)
        let restarted = RestartedServer()
        defer {
            first.stop()
            restarted.server?.stop()
        }
        try await fixture.run { client in
            let ana = try await client.signUp("Ana")
            let ben = try await client.signUp("Ben")
            try await PushTests.register(client, ben.token, PushTests.deviceToken(0xB1), locale: "en")
            try await client.makeMates(ana, ben)
            try await first.waitUntilReady()
            for index in 0..<600 {
                let walk = try await client.send(
                    .post,
                    "/v1/walks",
                    token: ana.token,
                    json: WalkRoutesTests.walk(to: ben, message: "Walk \(index)")
                )
                XCTAssertEqual(walk.status, 201)
                if index == 300 {
                    try await PushTests.eventually("pushes flowing") { double.deliveries.count >= 50 }
                    let claimed = "SELECT count(*) FROM push_outbox WHERE state IN ('pending', 'retrying') AND claimed_until IS NOT NULL"
                    let inFlight = Int(try client.sql(claimed)[0][0] ?? "0") ?? 0
                    XCTAssertGreaterThan(inFlight, 0, "nothing was in flight at the stop: the test would prove nothing")
                    first.stop()
                    // It answered for every claimed row before it exited: none is left claimed,
                    // and the outbox's delivered rows are exactly the pushes APNs accepted.
                    XCTAssertEqual(try client.sql(claimed)[0][0], "0", "a stopped serve left claimed rows to wait out their lease")
                    let delivered = try client.sql("SELECT count(*) FROM push_outbox WHERE state = 'delivered'")[0][0]
                    XCTAssertEqual(delivered, String(Self.distinctPushes(double.deliveries).count))
                    XCTAssertEqual(double.deliveries.count, Self.distinctPushes(double.deliveries).count)
                    print(
                        "PushCrashTests: serve stopped with \(inFlight) pushes claimed, \(Self.distinctPushes(double.deliveries).count) delivered and recorded"
                    )
                    double.answerAfter(.zero)
                    let second = try ServeProcess.start(fixture, environment: environment)
                    restarted.server = second
                    try await second.waitUntilReady()
                }
            }
            // The rest goes from the new process, and nothing twice (600 walks and the mate request).
            let expected = 601
            let start = ContinuousClock.now
            while Self.distinctPushes(double.deliveries).count < expected, ContinuousClock.now - start < .seconds(120) {
                try await Task.sleep(for: .milliseconds(100))
            }
            XCTAssertEqual(Self.distinctPushes(double.deliveries).count, expected, "pushes lost")
            XCTAssertEqual(double.deliveries.count, expected, "pushes sent twice")
        }
        try await double.stop()
    }
}

/// The serve process started after the kill (set once, inside the test's client closure).
private final class RestartedServer: @unchecked Sendable {
    var server: ServeProcess?
}
