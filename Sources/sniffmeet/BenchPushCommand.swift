import APNsDouble
import ArgumentParser
import Benchmarks
import Commands
@preconcurrency import Crypto
import Domain
import EventLog
import Foundation
import Logging
import PersonalData
import Postgres
import Projections
import Prometheus
import Push
import Synchronization

/// `sniffmeet bench push`: pushes from the outbox to a local APNs double (HTTP/2 over TLS on
/// loopback), next to the double's own capacity measured by `h2load` (Debian `nghttp2-client`)
/// through one connection in the same run.
///
/// 1. Latency: walks at a steady rate (500/s), each pushed to its addressee's device; the time
///    from the walk's commit (the command returning) to the double's 200, p50/p99.
/// 2. Throughput: `--burst` walks committed with delivery paused, then delivery started; pushes
///    per second until the last 200.
/// 3. Reference: `h2load -c 1 -m 200` posting the same pushes to the double: the same body,
///    the same headers (a collapse id and an expiry included), to the same devices in turn.
/// 2 and 3 alternate for `--rounds`; the medians are compared.
struct BenchPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push delivery rate and commit-to-APNs latency against a local APNs double, next to h2load."
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "walks per second in the latency run") var rate = 500
    @Option(help: "seconds of the latency run") var seconds = 10.0
    @Option(help: "walks committed before delivery starts in the throughput run") var burst = 20_000
    @Option(help: "sender/addressee pairs") var pairs = 200
    @Option(help: "alternating rounds of backlog delivery and h2load") var rounds = 3
    @Option(help: "rows each delivery loop claims at once (SNIFFMEET_PUSH_CONCURRENCY)") var concurrency = 200

    func validate() throws {
        guard rate > 0, seconds > 0, burst > 0, pairs > 0, rounds > 0, concurrency > 0 else {
            throw ValidationError("--rate, --seconds, --burst, --pairs, --rounds and --concurrency must be positive")
        }
    }

    func run() async throws {
        let logger = Logger(label: "sniffmeet.bench")
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        let connectionString = try await BenchAppendCommand.freshDatabase(opened, name: "sniffmeet_bench_push")
        let secret = try opened.masterKey()
        let sealer = EventSealer(secret: secret)
        let pool = ConnectionPool(connectionString: connectionString, maxConnections: 16)
        let log = EventLog(pool: pool)
        let handler = CommandHandler(log: log, sealer: sealer, walkTTL: 600)

        // The double, and the server's settings for it.
        let key = P256.Signing.PrivateKey()
        let double = try await APNsDouble.start(
            .init(topic: "app.sniffmeet.bench", keyID: "BENCHKEY01", teamID: "BENCHTEAM1", publicKey: key.publicKey)
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let caFile = folder.appendingPathComponent("double.pem").path
        try APNsDouble.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        var settings = APNsSettings(
            keyPEM: key.pemRepresentation,
            keyID: "BENCHKEY01",
            teamID: "BENCHTEAM1",
            topic: "app.sniffmeet.bench",
            baseURL: double.url,
            caFile: caFile
        )
        settings.concurrency = concurrency

        print("setting up \(pairs) mates with a device each…")
        let pairList = try await setUp(handler: handler, pool: pool, seal: DeviceTokenSeal(secret: secret))
        var options = ProjectionRunner.Options()
        options.batchSize = 1000
        let runner = ProjectionRunner(log: log, sealer: sealer, connectionString: connectionString, options: options, logger: logger)
        runner.start()
        let delivery = try PushDelivery(
            settings: settings,
            pool: pool,
            seal: DeviceTokenSeal(secret: secret),
            metrics: PrometheusCollectorRegistry(),
            logger: logger,
            idle: .milliseconds(5)
        )
        let before = double.deliveryCount

        // 1. Latency at a steady rate.
        let committed = CommitTimes()
        let deliveryTask = Task { try await delivery.run() }
        let clock = ContinuousClock()
        let interval = Duration.seconds(1.0 / Double(rate))
        var due = clock.now + .milliseconds(100)
        let end = due + .seconds(seconds)
        var index = 0
        var inFlight: [Task<Void, Error>] = []
        while due < end {
            try await Task.sleep(until: due, clock: clock)
            let (from, to) = pairList[index % pairList.count]
            let walkID = UUID()
            index += 1
            inFlight.append(
                Task {
                    _ = try await handler.handle(
                        .sendWalk(
                            walkID: walkID,
                            from: from,
                            to: to,
                            message: "Bench walk",
                            latitude: 37.5,
                            longitude: 127,
                            placeName: "Park"
                        ),
                        metadata: .firstUse(actor: from)
                    )
                    let now = Date()
                    committed.times.withLock { $0[walkID] = now }
                }
            )
            due += interval
        }
        for task in inFlight { try await task.value }
        let commits = committed.times.withLock { $0 }
        var latencies: [Double] = []
        let waitStart = clock.now
        // Until every walk's push has come (the mate requests' pushes of the set-up do not count).
        repeat {
            try await Task.sleep(for: .milliseconds(20))
            // Counting is cheap; reading every delivery's JSON while the last pushes are still on
            // their way would take the CPU they need.
            guard double.deliveryCount - before >= commits.count else { continue }
            latencies = []
            for delivery in double.deliveries.dropFirst(before) {
                guard let walk = ((delivery.json["notification"] as? [String: Any])?["walk_id"] as? String).flatMap(UUID.init(uuidString:)),
                    let at = commits[walk]
                else { continue }
                latencies.append(delivery.receivedAt.timeIntervalSince(at))
            }
        } while latencies.count < commits.count && clock.now - waitStart < .seconds(30)
        latencies.sort()
        deliveryTask.cancel()
        _ = try? await deliveryTask.value

        // 2 and 3, in alternating rounds (the machine's speed drifts; medians are compared):
        // a backlog delivered alone, then the double's capacity through one connection by h2load.
        var rates: [Double] = []
        var references: [Double] = []
        var queued = 0
        for round in 1...rounds {
            double.reset()
            print("round \(round): committing \(burst) walks with delivery paused…")
            try await commitBacklog(handler: handler, pairs: pairList)
            let head = try await log.head()
            _ = try await runner.waitUntil(position: head, timeout: .seconds(120))
            queued = try await pool.withConnection {
                try $0.execute("SELECT count(*) FROM push_outbox WHERE state = 'pending'").first!.int(0)
            }
            let burstStart = Date()
            let cpuBefore = CPUTimes.now()
            let registry = PrometheusCollectorRegistry()
            let burstDelivery = try PushDelivery(
                settings: settings,
                pool: pool,
                seal: DeviceTokenSeal(secret: secret),
                metrics: registry,
                logger: logger,
                idle: .milliseconds(5)
            )
            let burstTask = Task { try await burstDelivery.run() }
            while double.deliveryCount < queued, Date().timeIntervalSince(burstStart) < 300 {
                try await Task.sleep(for: .milliseconds(20))
            }
            let burstSeconds = (double.deliveries.last?.receivedAt ?? Date()).timeIntervalSince(burstStart)
            // For `perf report --time`: perf stamps samples with CLOCK_MONOTONIC.
            print(String(format: "delivery ran from %.3f to %.3f (CLOCK_MONOTONIC)", monotonicNow - burstSeconds, monotonicNow))
            let delivered = double.deliveries.count
            print("  CPU per push: \(CPUTimes.now().since(cpuBefore).perItem(delivered))")
            var text: [UInt8] = []
            registry.emit(into: &text)
            for line in String(decoding: text, as: UTF8.self).split(separator: "\n")
            where line.hasPrefix("sniffmeet_push_retries_total") || line.hasPrefix("sniffmeet_push_failed_total") {
                print("  \(line)")
            }
            let arrivals = double.deliveries.map { $0.receivedAt.timeIntervalSince(burstStart) }.sorted()
            if !arrivals.isEmpty {
                let at = { (share: Double) in arrivals[min(arrivals.count - 1, Int(Double(arrivals.count) * share))] }
                print(
                    String(
                        format: "  50%% delivered after %.2f s, 90%% after %.2f s, 99%% after %.2f s, all after %.2f s",
                        at(0.5),
                        at(0.9),
                        at(0.99),
                        arrivals.last!
                    )
                )
            }
            burstTask.cancel()
            _ = try? await burstTask.value
            rates.append(Double(delivered) / burstSeconds)
            double.reset()
            references.append(
                try h2load(double: double, key: key, folder: folder, streams: 200, requests: max(20_000, queued), devices: pairs)
            )
            print(
                String(
                    format: "round %d: %.0f pushes/s, h2load %.0f/s (%.2fx)",
                    round,
                    rates[round - 1],
                    references[round - 1],
                    rates[round - 1] / references[round - 1]
                )
            )
        }
        await runner.stop()

        let ours = median(rates)
        let reference = median(references)
        print("")
        print("| measure (medians of \(rounds) rounds) | sniffmeet | h2load (1 connection, 200 streams) | ratio |")
        print("|---|---|---|---|")
        print(
            String(format: "| pushes/s to the double's 200 (%d queued) | %.0f | %.0f | %.2fx |", queued, ours, reference, ours / reference)
        )
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] * 1000
        }
        print(
            String(
                format: "| commit → 200 at %d walks/s (%d pushes) | p50 %.1f ms, p99 %.1f ms, max %.1f ms | | |",
                rate,
                latencies.count,
                percentile(0.5),
                percentile(0.99),
                (latencies.last ?? .nan) * 1000
            )
        )
        try await double.stop()
        await pool.close()
    }

    /// `burst` walks from 8 writers, round robin over the pairs.
    private func commitBacklog(handler: CommandHandler, pairs pairList: [(UUID, UUID)]) async throws {
        let backlog = burst
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    var n = writer
                    while n < backlog {
                        let (from, to) = pairList[n % pairList.count]
                        _ = try await handler.handle(
                            .sendWalk(walkID: UUID(), from: from, to: to, message: "Burst", latitude: 37.5, longitude: 127, placeName: nil),
                            metadata: .firstUse(actor: from)
                        )
                        n += 8
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    private func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// `pairs` users mated with `pairs` others, each addressee with one session and device.
    private func setUp(handler: CommandHandler, pool: ConnectionPool, seal: DeviceTokenSeal) async throws -> [(UUID, UUID)] {
        var list: [(UUID, UUID)] = []
        for index in 0..<pairs {
            let from = UUID()
            let to = UUID()
            for (user, name) in [(from, "s\(index)"), (to, "r\(index)")] {
                _ = try await handler.handle(
                    .registerUser(
                        userID: user,
                        profile: DogProfile(
                            nickname: name,
                            dogName: "Dog",
                            age: 3,
                            sex: .male,
                            neutered: true,
                            size: .small,
                            keywords: [.smart]
                        )
                    ),
                    metadata: .firstUse(actor: user)
                )
            }
            let token = PresentedDropToken(issuedBy: to, expiresAt: Date().addingTimeInterval(300), used: false)
            _ = try await handler.handle(
                .requestMate(requestID: UUID(), from: from, to: to, dropToken: token),
                metadata: .firstUse(actor: from)
            )
            let reverse = PresentedDropToken(issuedBy: from, expiresAt: Date().addingTimeInterval(300), used: false)
            _ = try await handler.handle(
                .requestMate(requestID: UUID(), from: to, to: from, dropToken: reverse),
                metadata: .firstUse(actor: to)
            )
            let (mac, sealed) = try seal.seal(String(format: "%064x", index + 1))
            try await pool.withConnection { connection in
                _ = try connection.execute(
                    """
                    INSERT INTO sessions (session_id, token_hash, user_id, device_token_mac, device_token_sealed, locale)
                    VALUES ($1, $2, $3, $4, $5, 'en')
                    """,
                    [UUID(), Data(SHA256.hash(data: Data(UUID().uuidString.utf8))), to, mac, sealed]
                )
            }
            list.append((from, to))
        }
        return list
    }

    /// Requests per second `h2load` gets from the double through one connection.
    private func h2load(
        double: APNsDouble,
        key: P256.Signing.PrivateKey,
        folder: URL,
        streams: Int,
        requests: Int,
        devices: Int
    ) throws -> Double {
        let settings = APNsSettings(
            keyPEM: key.pemRepresentation,
            keyID: "BENCHKEY01",
            teamID: "BENCHTEAM1",
            topic: "app.sniffmeet.bench",
            baseURL: double.url
        )
        let jwt = try ProviderToken(settings: settings).jwt()
        let body = folder.appendingPathComponent("payload.json")
        try Data(
            #"{"aps":{"alert":{"title":"Walk with Dog?","body":"Bench walk · Park"},"sound":"default"},"notification":{"notification_id":"3f1c0a52-6d55-4d0b-9b3e-0d1b6b8a9c11","category":"walk_requested","from":{"user_id":"8c6f7f22-1e0b-4e9d-8f7e-5b0c6d1f2a33","dog_name":"Dog"},"walk_id":"0b7e3c1d-2a4f-4e6b-9c8d-7f1e2d3c4b5a","message":"Bench walk","latitude":37.5,"longitude":127,"place_name":"Park","created_at":"2026-11-24T12:00:00.000Z"}}"#
                .utf8
        ).write(to: body)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // The same work as a delivery: a push to each of the bench's devices in turn, with the
        // headers every push carries.
        let uris = folder.appendingPathComponent("uris.txt")
        try (1...devices).map { "\(double.url)/3/device/\(String(format: "%064x", $0))\n" }.joined().write(
            to: uris,
            atomically: true,
            encoding: .utf8
        )
        process.arguments = [
            "h2load", "-n", "\(requests)", "-c", "1", "-m", "\(streams)", "-d", body.path,
            "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: app.sniffmeet.bench", "-H", "apns-push-type: alert",
            "-H", "apns-priority: 10", "-H", "apns-collapse-id: \(UUID().uuidString.lowercased())",
            "-H", "apns-expiration: \(Int(Date().timeIntervalSince1970) + 600)", "-H", "content-type: application/json",
            "-i", uris.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        let cpuBefore = CPUTimes.now()
        let childrenBefore = CPUTimes.waitedChildren
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var cpu = CPUTimes.now()
        cpu.seconds["h2load", default: 0] += CPUTimes.waitedChildren - childrenBefore
        print("  CPU per request with h2load: \(cpu.since(cpuBefore).perItem(requests))")
        // "finished in 1.23s, 16260.16 req/s, …" and "requests: … 20000 succeeded"
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }),
            let rate = line.split(separator: ",").dropFirst().first?.trimmingCharacters(in: .whitespaces).split(separator: " ").first,
            let value = Double(rate)
        else { throw ValidationError("h2load gave no rate (is nghttp2-client installed?):\n\(text)") }
        if let status = text.split(separator: "\n").first(where: { $0.contains("status codes:") }) {
            print("h2load \(status.trimmingCharacters(in: .whitespaces))")
        }
        return value
    }
}

/// When each walk of the latency run committed.
final class CommitTimes: Sendable {
    let times = Mutex<[UUID: Date]>([:])
}

/// Seconds of CLOCK_MONOTONIC, the clock of `perf` samples.
var monotonicNow: Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
