import ArgumentParser
import Benchmarks
import Foundation
import Photos
import Synchronization

/// `sniffmeet bench photos`: photo uploads and thumbnail fetches through a spawned
/// `sniffmeet serve` (HTTP, libvips, PostgreSQL), each next to `vipsthumbnail` (libvips' command
/// line) doing the same image work on the same images in the same run, with the ratio; and the
/// server's peak memory (VmHWM) during 8 concurrent 12-megapixel uploads.
///
/// The same work: an upload is decoded once with shrink-on-load to at most 1080 px (upright, no
/// metadata) and the 200 x 200 centre thumbnail is made from that copy; the reference runs
/// `vipsthumbnail --size 1080` on the original, then `vipsthumbnail --size 200x200 --smartcrop
/// centre` on its output, both saving `[Q=85,strip,optimize_coding]`. Both sides run as many
/// jobs at once as there are cores; rounds alternate and the medians are compared.
struct BenchPhotosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photos",
        abstract: "Photo uploads/s (12-MP JPEG, HEIC) and thumbnail GETs/s vs vipsthumbnail; peak server memory."
    )

    @Option(help: "port for the spawned server") var port = 18_480
    @Option(help: "uploads per round and side") var uploads = 16
    @Option(help: "rounds per measurement (medians are compared)") var rounds = 3
    @Option(help: "seconds per thumbnail round") var seconds = 4.0
    @Option(help: "concurrent clients (default: the cores)") var clients = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "where the generated test images are kept between runs") var images = "/tmp/sniffmeet-bench-images"

    func run() async throws {
        let files = try makeImages()
        // Others may enter (not read) it: as root the embedded cluster runs as `postgres`.
        let work = try makeFolder("/tmp/sniffmeet-bench-photos-\(getpid())", mode: 0o711)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let server = try SpawnedServer(port: port, dataDirectory: work + "/data", log: work + "/serve.log")
        defer { server.stop() }
        try await server.waitUntilReady()
        let port = self.port
        // One user per client (and per concurrent upload of the memory run), and one whose photo
        // the thumbnail GETs fetch.
        let tokens = try (0...max(clients, 8)).map { index in
            let reply = try BenchHTTPClient(port: port).send(
                "POST",
                "/v1/users",
                headers: ["Content-Type": "application/json"],
                body: Data(
                    #"{"nickname": "bph\#(index)x", "dog_name": "Bench", "age": 3, "sex": "female", "neutered": true, "size": "small", "keywords": ["smart"]}"#
                        .utf8
                )
            )
            guard reply.status == 201, let json = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any],
                let token = json["token"] as? String
            else { throw BenchHTTPClient.Failure(description: "sign-up answered \(reply.status)") }
            return token
        }

        var table: [(String, Double, Double)] = []
        for (name, file) in [("12-MP JPEG", files.jpeg), ("12-MP HEIC", files.heic)] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            let type = file.hasSuffix(".heic") ? "image/heic" : "image/jpeg"
            _ = try upload(bytes, type: type, token: tokens[0])  // warm-up
            var serverRates: [Double] = []
            var referenceRates: [Double] = []
            for round in 0..<rounds {
                serverRates.append(try await uploadRate(bytes, type: type, tokens: tokens))
                referenceRates.append(try await vipsthumbnailRate(file, folder: work))
                FileHandle.standardError.write(
                    Data(
                        "\(name) round \(round + 1): server \(fixed(serverRates.last!))/s, vipsthumbnail \(fixed(referenceRates.last!))/s\n"
                            .utf8
                    )
                )
            }
            table.append(("\(name) uploads/s", Throughput.median(serverRates), Throughput.median(referenceRates)))
        }

        // Thumbnails: the stored one served, next to making it from the stored 1080 px copy.
        let lastPhoto = try upload(try Data(contentsOf: URL(fileURLWithPath: files.jpeg)), type: "image/jpeg", token: tokens.last!)
        let full = try BenchHTTPClient(port: port).send("GET", "/v1/photos/\(lastPhoto)")
        let fullFile = work + "/served-full.jpg"
        try Data(full.body).write(to: URL(fileURLWithPath: fullFile))
        var serverRates: [Double] = []
        var referenceRates: [Double] = []
        for _ in 0..<rounds {
            serverRates.append(try await thumbnailRate(lastPhoto))
            referenceRates.append(try await vipsthumbnailSquareRate(fullFile, folder: work))
        }
        table.append(("thumbnail GETs/s", Throughput.median(serverRates), Throughput.median(referenceRates)))

        let jpeg = try Data(contentsOf: URL(fileURLWithPath: files.jpeg))
        let heic = try Data(contentsOf: URL(fileURLWithPath: files.heic))
        let pid = server.process.processIdentifier
        let idle = Self.memory(pid, "VmRSS")
        let peakJPEG = try await peak(pid, jpeg, type: "image/jpeg", tokens: tokens)
        let peakHEIC = try await peak(pid, heic, type: "image/heic", tokens: tokens)

        print("")
        print("| work (\(clients) at a time) | sniffmeet serve | vipsthumbnail | ratio |")
        print("|---|---|---|---|")
        for (name, ours, reference) in table {
            print("| \(name) | \(fixed(ours)) | \(fixed(reference)) | \(String(format: "%.2fx", ours / reference)) |")
        }
        print("")
        print("| server memory (VmHWM of `sniffmeet serve`) | MiB |")
        print("|---|---|")
        print("| idle, after the runs above (VmRSS) | \(idle / 1024) |")
        print("| peak during 8 concurrent 12-MP JPEG uploads | \(peakJPEG / 1024) |")
        print("| peak during 8 concurrent 12-MP HEIC uploads | \(peakHEIC / 1024) |")
        print("")
        print(
            "images: \(files.jpeg) (\(jpeg.count / 1024) KiB), \(files.heic) (\(heic.count / 1024) KiB); "
                + "\(uploads) uploads per round, \(rounds) rounds, medians"
        )
    }

    // MARK: Images

    /// A 4032 x 3024 JPEG and HEIC (a phone camera's 12 MP), made once with libvips and kept.
    private func makeImages() throws -> (jpeg: String, heic: String) {
        let folder = try makeFolder(images)
        let jpeg = folder + "/phone-4032x3024.jpg"
        let heic = folder + "/phone-4032x3024.heic"
        if !FileManager.default.fileExists(atPath: jpeg) {
            try SyntheticPhoto.make(width: 4032, height: 3024, .jpeg(quality: 92)).write(to: URL(fileURLWithPath: jpeg))
        }
        if !FileManager.default.fileExists(atPath: heic) {
            FileHandle.standardError.write(Data("encoding a 12-MP HEIC once (kept in \(folder); x265 takes a while)\n".utf8))
            try SyntheticPhoto.make(width: 4032, height: 3024, .heif(quality: 50)).write(to: URL(fileURLWithPath: heic))
        }
        return (jpeg, heic)
    }

    private func makeFolder(_ path: String, mode: Int = 0o700) throws -> String {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
        return path
    }

    // MARK: Measurements

    /// Uploads `bytes` once; the new photo's id.
    private func upload(_ bytes: Data, type: String, token: String, client: BenchHTTPClient? = nil) throws -> String {
        let reply = try (client ?? BenchHTTPClient(port: port)).send(
            "PUT",
            "/v1/me/photo",
            headers: ["Content-Type": type, "Authorization": "Bearer \(token)"],
            body: bytes
        )
        guard reply.status == 200, let json = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any],
            let id = json["profile_image"] as? String
        else {
            throw BenchHTTPClient.Failure(description: "upload answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
        }
        return id
    }

    /// `uploads` uploads by `clients` concurrent clients (each its own user); uploads/s.
    private func uploadRate(_ bytes: Data, type: String, tokens: [String]) async throws -> Double {
        let port = self.port
        let me = self
        return try await Self.rate(jobs: uploads, workers: clients) { worker in
            let client = try BenchHTTPClient(port: port)
            return { _ = try me.upload(bytes, type: type, token: tokens[worker], client: client) }
        }
    }

    /// The same image work with `vipsthumbnail`, `clients` jobs at a time; images/s.
    private func vipsthumbnailRate(_ file: String, folder: String) async throws -> Double {
        try await Self.rate(jobs: uploads, workers: clients) { worker in
            let full = "\(folder)/vips-\(worker)-full.jpg"
            return {
                try Self.vipsthumbnail([file, "--size", "1080", "-o", full + "[Q=85,strip,optimize_coding]"])
                try Self.vipsthumbnail([
                    full, "--size", "200x200", "--smartcrop", "centre", "-o",
                    "\(folder)/vips-\(worker)-thumb.jpg[Q=85,strip,optimize_coding]",
                ])
            }
        }
    }

    /// `GET /v1/photos/{id}/thumbnail` in closed loops for `seconds`; GETs/s.
    private func thumbnailRate(_ id: String) async throws -> Double {
        let port = self.port
        return try await Self.rate(seconds: seconds, workers: clients) { _ in
            let client = try BenchHTTPClient(port: port)
            return {
                let reply = try client.send("GET", "/v1/photos/\(id)/thumbnail")
                guard reply.status == 200, !reply.body.isEmpty else {
                    throw BenchHTTPClient.Failure(description: "GET answered \(reply.status)")
                }
            }
        }
    }

    /// The thumbnail made from the 1080 px copy with `vipsthumbnail`, for `seconds`; images/s.
    private func vipsthumbnailSquareRate(_ file: String, folder: String) async throws -> Double {
        try await Self.rate(seconds: seconds, workers: clients) { worker in
            {
                try Self.vipsthumbnail([
                    file, "--size", "200x200", "--smartcrop", "centre", "-o", "\(folder)/square-\(worker).jpg[Q=85,strip,optimize_coding]",
                ])
            }
        }
    }

    /// The server's VmHWM (KiB) after 8 uploads sent at once, twice, with the mark reset first
    /// (`clear_refs` 5).
    private func peak(_ pid: Int32, _ bytes: Data, type: String, tokens: [String]) async throws -> Int {
        try? "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
        let port = self.port
        let me = self
        for _ in 0..<2 {
            _ = try await Self.rate(jobs: 8, workers: 8) { worker in
                let client = try BenchHTTPClient(port: port)
                return { _ = try me.upload(bytes, type: type, token: tokens[worker], client: client) }
            }
        }
        return Self.memory(pid, "VmHWM")
    }

    /// A `/proc/<pid>/status` field in KiB.
    static func memory(_ pid: Int32, _ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ").dropFirst().first { !$0.isEmpty }.map(String.init) ?? "") ?? 0
        }
        return 0
    }

    static func vipsthumbnail(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["vipsthumbnail"] + arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchHTTPClient.Failure(description: "vipsthumbnail \(arguments.joined(separator: " ")) failed")
        }
    }

    /// `jobs` jobs shared by `workers` threads (or as many as they finish in `seconds`), each
    /// thread running the job `prepare` made for it; jobs/s over the wall time.
    static func rate(
        jobs: Int = .max,
        seconds: Double = .infinity,
        workers: Int,
        _ prepare: @escaping @Sendable (Int) throws -> () throws -> Void
    ) async throws -> Double {
        let counts = JobCounts(jobs)
        let start = Date()
        let deadline = start.addingTimeInterval(seconds.isFinite ? seconds : 86400)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    try await onThread("bench-\(worker)") {
                        let job = try prepare(worker)
                        while Date() < deadline, counts.remaining.wrappingSubtract(1, ordering: .relaxed).oldValue > 0 {
                            try job()
                            counts.done.wrappingAdd(1, ordering: .relaxed)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        return Double(counts.done.load(ordering: .relaxed)) / Date().timeIntervalSince(start)
    }
}

/// Jobs left and jobs done, shared by a measurement's threads.
private final class JobCounts: Sendable {
    let remaining: Atomic<Int>
    let done = Atomic<Int>(0)
    init(_ jobs: Int) { remaining = Atomic(jobs) }
}

private func fixed(_ value: Double) -> String { String(format: value >= 100 ? "%.0f" : "%.1f", value) }
