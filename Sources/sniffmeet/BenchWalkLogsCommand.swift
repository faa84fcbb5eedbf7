import ArgumentParser
import Benchmarks
import Foundation
import Synchronization
import WalkRoutes

/// `sniffmeet bench walk-logs`: walk log uploads of a 10,000-point recording through a spawned
/// `sniffmeet serve` (HTTP, parsing, checks, cleaning, geodesics, sealing, the append), as GPX
/// and as the same points in JSON, next to `gpsbabel` (Debian) reading the same GPX file,
/// simplifying it and writing it, in the same run, with the ratio; p99 latency of the uploads;
/// and the server's peak memory (VmHWM) over its idle size while 8 uploads run at once.
///
/// The same work, roughly: gpsbabel parses the GPX into its track, runs its `simplify`
/// (cross-track error 3 m, as the server's display tolerance) and writes GPX 1.1; the server
/// parses, checks and cleans the points, measures them on the ellipsoid, simplifies them for the
/// answer's polyline, seals and stores them, appends the event and answers. Both run `clients`
/// jobs at a time; rounds alternate and the medians are compared.
struct BenchWalkLogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "walk-logs",
        abstract: "Walk log uploads/s (10,000-point GPX and JSON) and p99 vs gpsbabel; peak server memory with 8 at once."
    )

    @Option(help: "port for the spawned server") var port = 18_482
    @Option(help: "points in the recording") var points = 10_000
    @Option(help: "uploads per round and side") var uploads = 64
    @Option(help: "rounds per measurement (medians are compared)") var rounds = 3
    @Option(help: "concurrent clients") var clients = 8

    func run() async throws {
        let work = "/tmp/sniffmeet-bench-walk-logs-\(getpid())"
        // Others may enter (not read) it: as root the embedded cluster runs as `postgres`.
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o711])
        defer { try? FileManager.default.removeItem(atPath: work) }
        let recording = Self.recording(points)
        let gpx = Data(GPX.write(recording, name: "bench").utf8)
        let json = Data(Self.json(recording).utf8)
        let gpxFile = work + "/walk.gpx"
        try gpx.write(to: URL(fileURLWithPath: gpxFile))

        let server = try SpawnedServer(port: port, dataDirectory: work + "/data", log: work + "/serve.log")
        defer { server.stop() }
        try await server.waitUntilReady()
        let port = self.port
        let tokens = try (0..<max(clients, 8)).map { index in
            let reply = try BenchHTTPClient(port: port).send(
                "POST",
                "/v1/users",
                headers: ["Content-Type": "application/json"],
                body: Data(
                    #"{"nickname": "bwl\#(index)x", "dog_name": "Bench", "age": 3, "sex": "female", "neutered": true, "size": "small", "keywords": ["smart"]}"#
                        .utf8
                )
            )
            guard reply.status == 201, let object = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any],
                let token = object["token"] as? String
            else { throw BenchHTTPClient.Failure(description: "sign-up answered \(reply.status)") }
            return token
        }

        var table: [(String, Double, Double, Double)] = []
        let reference = Throughput.self
        for (name, body, type) in [("GPX", gpx, "application/gpx+xml"), ("JSON", json, "application/json")] {
            try Self.upload(body, type: type, token: tokens[0], port: port)  // warm-up
            var rates: [Double] = []
            var p99s: [Double] = []
            var references: [Double] = []
            for round in 0..<rounds {
                let measured = try await Self.measure(jobs: uploads, workers: clients) { worker in
                    let client = try BenchHTTPClient(port: port)
                    return { try Self.upload(body, type: type, token: tokens[worker], port: port, client: client) }
                }
                rates.append(measured.rate)
                p99s.append(measured.p99)
                references.append(
                    try await Self.measure(jobs: uploads, workers: clients) { worker in
                        { try Self.gpsbabel(gpxFile, out: "\(work)/out-\(worker).gpx") }
                    }.rate
                )
                FileHandle.standardError.write(
                    Data(
                        "\(name) round \(round + 1): server \(fixed(rates.last!))/s (p99 \(fixed(p99s.last! * 1000)) ms), gpsbabel \(fixed(references.last!))/s\n"
                            .utf8
                    )
                )
            }
            table.append((name, reference.median(rates), reference.median(p99s), reference.median(references)))
        }

        let pid = server.process.processIdentifier
        let idle = Self.memory(pid, "VmRSS")
        try? "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
        for _ in 0..<2 {
            _ = try await Self.measure(jobs: 8, workers: 8) { worker in
                let client = try BenchHTTPClient(port: port)
                return { try Self.upload(gpx, type: "application/gpx+xml", token: tokens[worker], port: port, client: client) }
            }
        }
        let peak = Self.memory(pid, "VmHWM")

        print("")
        print("| \(points)-point walk, \(clients) at a time | uploads/s | p99 ms | gpsbabel read+simplify+write/s | ratio |")
        print("|---|---|---|---|---|")
        for (name, rate, p99, babel) in table {
            print(
                "| \(name) (\(name == "GPX" ? gpx.count / 1024 : json.count / 1024) KiB) | \(fixed(rate)) | \(fixed(p99 * 1000)) | \(fixed(babel)) | \(String(format: "%.2fx", rate / babel)) |"
            )
        }
        print("")
        print("| server memory (`sniffmeet serve`) | MiB |")
        print("|---|---|")
        print("| idle, after the runs above (VmRSS) | \(idle / 1024) |")
        print("| peak during 8 concurrent GPX uploads (VmHWM) | \(peak / 1024) |")
        print("| extra over idle | \(max(0, peak - idle) / 1024) |")
        print("")
        print("\(uploads) uploads per round, \(rounds) rounds, medians; gpsbabel: -x simplify,crosstrack,error=0.003k")
    }

    // MARK: The recording

    /// A walk of `count` fixes, one a second at about 1.3 m/s, turning gently (deterministic).
    static func recording(_ count: Int) -> [TrackPoint] {
        var position = Coordinate(latitude: 37.5665, longitude: 126.9780)
        var bearing = 30.0
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        let start = 1_764_064_800.0
        return (0..<count).map { s in
            if s > 0 {
                bearing += (next() - 0.5) * 20
                position = Geodesic.offset(position, bearing: bearing, distance: 1.1 + next() * 0.4)
            }
            return TrackPoint(time: start + Double(s), latitude: position.latitude, longitude: position.longitude, accuracy: 5)
        }
    }

    static func json(_ points: [TrackPoint]) -> String {
        "{\"points\":["
            + points.map { p in
                #"{"time":"\#(RFC3339.format(p.time))","latitude":\#(p.latitude),"longitude":\#(p.longitude),"accuracy":5}"#
            }
            .joined(separator: ",") + "]}"
    }

    // MARK: Measurements

    static func upload(_ body: Data, type: String, token: String, port: Int, client: BenchHTTPClient? = nil) throws {
        let reply = try (client ?? BenchHTTPClient(port: port)).send(
            "POST",
            "/v1/walk-logs",
            headers: ["Content-Type": type, "Authorization": "Bearer \(token)"],
            body: body
        )
        guard reply.status == 201 else {
            throw BenchHTTPClient.Failure(
                description: "upload answered \(reply.status): \(String(decoding: reply.body.prefix(300), as: UTF8.self))"
            )
        }
    }

    static func gpsbabel(_ file: String, out: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gpsbabel", "-i", "gpx", "-f", file, "-x", "simplify,crosstrack,error=0.003k", "-o", "gpx", "-F", out]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchHTTPClient.Failure(description: "gpsbabel failed (is it installed?)") }
    }

    /// `jobs` jobs shared by `workers` threads; jobs/s over the wall time and the 99th
    /// percentile of the jobs' own times (seconds).
    static func measure(
        jobs: Int,
        workers: Int,
        _ prepare: @escaping @Sendable (Int) throws -> () throws -> Void
    ) async throws -> (rate: Double, p99: Double) {
        let shared = Timings(jobs)
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    try await onThread("bench-\(worker)") {
                        let job = try prepare(worker)
                        while shared.remaining.wrappingSubtract(1, ordering: .relaxed).oldValue > 0 {
                            let began = ContinuousClock.now
                            try job()
                            let took = ContinuousClock.now - began
                            shared.times.withLock {
                                $0.append(Double(took.components.seconds) + Double(took.components.attoseconds) * 1e-18)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let wall = ContinuousClock.now - start
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) * 1e-18
        let sorted = shared.times.withLock { $0 }.sorted()
        let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        return (Double(sorted.count) / seconds, p99)
    }

    /// A `/proc/<pid>/status` field in KiB.
    static func memory(_ pid: Int32, _ field: String) -> Int { BenchPhotosCommand.memory(pid, field) }
}

/// Jobs left and the times of those done, shared by a measurement's threads.
private final class Timings: Sendable {
    let remaining: Atomic<Int>
    let times = Mutex<[Double]>([])
    init(_ jobs: Int) { remaining = Atomic(jobs) }
}

private func fixed(_ value: Double) -> String { String(format: value >= 100 ? "%.0f" : "%.1f", value) }
