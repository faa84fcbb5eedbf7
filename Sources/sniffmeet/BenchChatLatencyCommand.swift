import ArgumentParser
import Benchmarks
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `sniffmeet bench chat-latency`: how long a chat message takes from the sender's
/// `POST /v1/chats/{id}/messages` to the `message` event on the mate's `GET /v1/me/stream`,
/// through a spawned `sniffmeet serve`, at a steady rate (500 messages/s by default) spread over
/// many pairs, each receiver with its stream open. Reports p50/p99/max of that delay, the rate
/// achieved (senders that fall behind the schedule show here, not as a lower latency), and
/// messages that never arrived.
///
/// Each message's delay runs from the moment its POST starts (not its scheduled time, so a
/// late sender does not count against the server) to the moment the stream's reader thread
/// sees the whole event; the text carries the message's number, as the event may well arrive
/// before the POST's answer.
struct BenchChatLatencyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat-latency",
        abstract: "Chat send-to-stream latency p50/p99 at a steady rate over many pairs (goal p99 < 100 ms at 500/s)."
    )

    @Option(help: "port for the spawned server") var port = 18_483
    @Option(help: "messages per second, spread over the pairs") var rate = 500
    @Option(help: "seconds measured (after a warm-up of 2 s at the same rate)") var seconds = 20
    @Option(help: "pairs of mates; each receiver keeps one stream open") var pairs = 200
    @Option(help: "sending threads, each on its own keep-alive connection") var senders = 32

    func run() async throws {
        let work = "/tmp/sniffmeet-bench-chat-latency-\(getpid())"
        // Others may enter (not read) it: as root the embedded cluster runs as `postgres`.
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o711])
        defer { try? FileManager.default.removeItem(atPath: work) }
        let server = try SpawnedServer(
            port: port,
            dataDirectory: work + "/data",
            log: work + "/serve.log",
            environment: ["SNIFFMEET_STREAMS_PER_PROCESS": String(pairs + 100)]
        )
        defer { server.stop() }
        try await server.waitUntilReady()
        let port = self.port

        FileHandle.standardError.write(Data("signing up and pairing \(pairs) pairs…\n".utf8))
        let mates = try await onThread("bench-setup") { try Self.pairUp(pairs, port: port) }
        let streams = try StreamReaders(receivers: mates.map(\.receiver), port: port)
        let reading = Thread { streams.run() }
        reading.name = "bench-streams"
        reading.start()
        defer { streams.stop() }
        try streams.waitUntilOpen(timeout: .seconds(30))
        // The feed has subscribed every stream once its first round ran; give it a moment.
        try await Task.sleep(for: .seconds(1))

        let warmup = 2 * rate
        let total = warmup + seconds * rate
        let run = SendSchedule(total: total, rate: rate)
        let started = ContinuousClock.now + .milliseconds(200)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<senders {
                group.addTask {
                    try await onThread("bench-send-\(worker)") {
                        let client = try BenchHTTPClient(port: port)
                        while true {
                            let index = run.next.wrappingAdd(1, ordering: .relaxed).oldValue
                            guard index < total else { return }
                            let due = started + .nanoseconds(Int64(index) * 1_000_000_000 / Int64(run.rate))
                            let now = ContinuousClock.now
                            if due > now { Thread.sleep(forTimeInterval: Self.seconds(due - now)) }
                            let pair = mates[index % mates.count]
                            let began = ContinuousClock.now
                            run.began(index, at: began)
                            let reply = try client.send(
                                "POST",
                                "/v1/chats/\(pair.receiver.id)/messages",
                                headers: ["Content-Type": "application/json", "Authorization": "Bearer \(pair.sender.token)"],
                                body: Data(#"{"text": "bench \#(index) msg"}"#.utf8)
                            )
                            guard reply.status == 201 else {
                                throw BenchHTTPClient.Failure(
                                    description: "send answered \(reply.status): \(String(decoding: reply.body.prefix(300), as: UTF8.self))"
                                )
                            }
                            run.finished(at: ContinuousClock.now)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        // Whatever is still on its way gets 2 s.
        try await Task.sleep(for: .seconds(2))
        streams.stop()

        let arrivals = streams.arrivals()
        let (starts, lastFinish) = run.results()
        var delays: [Double] = []
        var lost = 0
        for index in warmup..<total {
            guard let start = starts[index] else { continue }
            guard let arrived = arrivals[index] else {
                lost += 1
                continue
            }
            delays.append(Self.seconds(arrived - start) * 1000)
        }
        delays.sort()
        let firstMeasured = starts[warmup] ?? started
        let achieved = Double(total - warmup) / Self.seconds(lastFinish - firstMeasured)
        func percentile(_ p: Double) -> Double {
            delays.isEmpty ? .nan : delays[min(delays.count - 1, max(0, Int((Double(delays.count) * p).rounded(.up)) - 1))]
        }
        print("")
        print("| chat send → mate's /v1/me/stream, \(pairs) pairs, \(senders) senders | value |")
        print("|---|---|")
        print("| target rate (messages/s) | \(rate) |")
        print("| achieved rate (messages/s) | \(String(format: "%.0f", achieved)) |")
        print("| messages measured (after \(warmup) warm-up) | \(total - warmup) |")
        print("| p50 ms | \(String(format: "%.1f", percentile(0.5))) |")
        print("| p99 ms | \(String(format: "%.1f", percentile(0.99))) |")
        print("| max ms | \(String(format: "%.1f", delays.last ?? .nan)) |")
        print("| never arrived | \(lost) |")
        print("")
        print("goal: p99 < 100 ms at 500 messages/s")
        if lost > 0 { throw ExitCode(1) }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    // MARK: Setup

    struct Account: Sendable {
        var id: String
        var token: String
    }

    struct Pair: Sendable {
        var sender: Account
        var receiver: Account
    }

    /// `count` pairs of new mates (sign-up, drop token, request, accept).
    static func pairUp(_ count: Int, port: Int) throws -> [Pair] {
        let client = try BenchHTTPClient(port: port)
        func call(_ method: String, _ path: String, token: String? = nil, _ body: String = "{}", expect: Int) throws -> [String: Any] {
            var headers = ["Content-Type": "application/json"]
            if let token { headers["Authorization"] = "Bearer \(token)" }
            let reply = try client.send(method, path, headers: headers, body: Data(body.utf8))
            guard reply.status == expect, let object = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any] else {
                throw BenchHTTPClient.Failure(
                    description: "\(method) \(path) answered \(reply.status): \(String(decoding: reply.body.prefix(300), as: UTF8.self))"
                )
            }
            return object
        }
        func signUp(_ nickname: String) throws -> Account {
            let object = try call(
                "POST",
                "/v1/users",
                #"{"nickname": "\#(nickname)", "dog_name": "Bench", "age": 3, "sex": "female", "neutered": true, "size": "small", "keywords": ["smart"]}"#,
                expect: 201
            )
            guard let id = object["user_id"] as? String, let token = object["token"] as? String else {
                throw BenchHTTPClient.Failure(description: "sign-up without user_id or token")
            }
            return Account(id: id, token: token)
        }
        return try (0..<count).map { index in
            let sender = try signUp("bcs\(index)x")
            let receiver = try signUp("bcr\(index)x")
            let drop = try call("POST", "/v1/me/drop-tokens", token: receiver.token, expect: 201)["drop_token"] as? String ?? ""
            let request = try call(
                "POST",
                "/v1/mate-requests",
                token: sender.token,
                #"{"to": "\#(receiver.id)", "drop_token": "\#(drop)"}"#,
                expect: 201
            )
            _ = try call("POST", "/v1/mate-requests/\(request["request_id"] as? String ?? "")/accept", token: receiver.token, expect: 200)
            return Pair(sender: sender, receiver: receiver)
        }
    }
}

/// Which message is due next, when each one's POST began, and when the last one ended.
private final class SendSchedule: Sendable {
    let rate: Int
    let next = Atomic<Int>(0)
    private let state: Mutex<(starts: [ContinuousClock.Instant?], last: ContinuousClock.Instant)>

    init(total: Int, rate: Int) {
        self.rate = rate
        state = Mutex((Array(repeating: nil, count: total), .now))
    }

    func began(_ index: Int, at instant: ContinuousClock.Instant) { state.withLock { $0.starts[index] = instant } }
    func finished(at instant: ContinuousClock.Instant) { state.withLock { $0.last = max($0.last, instant) } }
    func results() -> ([ContinuousClock.Instant?], ContinuousClock.Instant) { state.withLock { ($0.starts, $0.last) } }
}

/// Every receiver's `/v1/me/stream`, read by one thread with `poll`: each connection's chunked
/// body is taken apart into Server-Sent Events, and each `message` event's number (from its
/// text, "bench N msg") is stamped with the time its last line arrived.
private final class StreamReaders: @unchecked Sendable {
    private final class Stream {
        let descriptor: Int32
        var raw: [UInt8] = []
        var headerDone = false
        /// Bytes still to take of the current chunk; nil while a chunk-size line is awaited.
        var chunkLeft: Int?
        var text: [UInt8] = []
        var event = ""

        init(descriptor: Int32) { self.descriptor = descriptor }
    }

    private let streams: [Stream]
    private let stopped = Atomic<Bool>(false)
    private let opened = Atomic<Int>(0)
    private let failure = Mutex<String?>(nil)
    private let seen = Mutex<[Int: ContinuousClock.Instant]>([:])

    init(receivers: [BenchChatLatencyCommand.Account], port: Int) throws {
        streams = try receivers.map { receiver in
            let descriptor = try BenchHTTPClient.connectLoopback(port: port)
            let request = Array(
                "GET /v1/me/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(receiver.token)\r\nAccept: text/event-stream\r\n\r\n"
                    .utf8
            )
            guard request.withUnsafeBytes({ Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
                throw BenchHTTPClient.Failure(description: "stream request not sent")
            }
            return Stream(descriptor: descriptor)
        }
    }

    func waitUntilOpen(timeout: Duration) throws {
        let deadline = ContinuousClock.now + timeout
        while opened.load(ordering: .relaxed) < streams.count {
            if let failure = failure.withLock({ $0 }) { throw BenchHTTPClient.Failure(description: failure) }
            guard ContinuousClock.now < deadline else {
                throw BenchHTTPClient.Failure(description: "only \(opened.load(ordering: .relaxed)) of \(streams.count) streams opened")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    func arrivals() -> [Int: ContinuousClock.Instant] { seen.withLock { $0 } }

    func run() {
        var descriptors = streams.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !stopped.load(ordering: .relaxed) {
            let ready = poll(&descriptors, nfds_t(descriptors.count), 100)
            guard ready > 0 else { continue }
            let now = ContinuousClock.now
            for index in descriptors.indices where descriptors[index].revents != 0 {
                descriptors[index].revents = 0
                let count = chunk.withUnsafeMutableBytes { recv(streams[index].descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else {
                    if !stopped.load(ordering: .relaxed) { failure.withLock { $0 = "a stream was closed by the server" } }
                    descriptors[index].fd = -1
                    continue
                }
                take(chunk[0..<count], into: streams[index], at: now)
            }
        }
        for stream in streams { close(stream.descriptor) }
    }

    private func take(_ bytes: ArraySlice<UInt8>, into stream: Stream, at now: ContinuousClock.Instant) {
        stream.raw.append(contentsOf: bytes)
        if !stream.headerDone {
            guard let end = Self.find([13, 10, 13, 10], in: stream.raw) else { return }
            let head = String(decoding: stream.raw[0..<end], as: UTF8.self)
            guard head.hasPrefix("HTTP/1.1 200") else {
                failure.withLock { $0 = "stream refused: \(head.prefix(80))" }
                return
            }
            stream.raw.removeFirst(end + 4)
            stream.headerDone = true
            opened.add(1, ordering: .relaxed)
        }
        // Chunked transfer encoding: "size\r\n" data "\r\n", repeated.
        while true {
            if let left = stream.chunkLeft {
                let taken = min(left, stream.raw.count)
                stream.text.append(contentsOf: stream.raw[0..<taken])
                stream.raw.removeFirst(taken)
                if taken < left {
                    stream.chunkLeft = left - taken
                    break
                }
                guard stream.raw.count >= 2 else {
                    stream.chunkLeft = 0
                    break
                }
                stream.raw.removeFirst(2)
                stream.chunkLeft = nil
            } else {
                guard let end = Self.find([13, 10], in: stream.raw) else { break }
                let size = Int(String(decoding: stream.raw[0..<end], as: UTF8.self).split(separator: ";")[0], radix: 16) ?? 0
                stream.raw.removeFirst(end + 2)
                stream.chunkLeft = size
            }
        }
        // Whole lines of the event stream.
        while let newline = stream.text.firstIndex(of: 10) {
            let line = String(decoding: stream.text[0..<newline], as: UTF8.self)
            stream.text.removeFirst(newline + 1)
            if line.hasPrefix("event: ") {
                stream.event = String(line.dropFirst(7))
            } else if line.hasPrefix("data: "), stream.event == "message", let number = Self.number(in: line) {
                seen.withLock { if $0[number] == nil { $0[number] = now } }
            } else if line.isEmpty {
                stream.event = ""
            }
        }
    }

    /// N of a `"text":"bench N msg"` in an event's data line.
    private static func number(in line: String) -> Int? {
        guard let start = line.range(of: "\"text\":\"bench ") else { return nil }
        let digits = line[start.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
