import Foundation
import Postgres
import Projections
import XCTest

/// `GET /v1/me/stream`: chat messages, read markers and typing beside inbox entries, resumed
/// with `Last-Event-ID` without loss or duplicates; the inbox-only stream keeps working.
final class ChatStreamTests: XCTestCase {
    typealias Frames = NotificationStreamTests

    static func json(_ frame: NotificationStreamTests.Frame) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data((frame.data ?? "").utf8))) as? [String: Any] ?? [:]
    }

    /// An app stream waits for both projectors it reads from (the inbox's and the chats');
    /// with the chats projector stopped, the inbox-only streams open beside it still get their
    /// entries at once. The chats projector is held here by another session owning its lock.
    func testAStoppedChatsProjectorHoldsUpOnlyTheAppStreams() async throws {
        let fixture = try GatewayFixture("chat_stream_stopped") {
            $0.streamMaxDuration = .milliseconds(2500)
            $0.heartbeatInterval = .milliseconds(300)
        }
        let owner = try Connection(connectionString: fixture.ownerURL)
        try owner.execute("SELECT pg_advisory_lock($1::int, hashtext('chats'))", [ProjectionRunner.lockClass])
        try await fixture.run { client in
            let a = try await client.signUp("stoppeda")
            let b = try await client.signUp("stoppedb")
            try await client.makeMates(a, b)

            async let inbox = client.send(.get, "/v1/me/notifications/stream", token: b.token)
            async let app = client.send(.get, "/v1/me/stream", token: b.token)
            try await Task.sleep(for: .milliseconds(700))
            let walk = try await client.send(.post, "/v1/walks", token: a.token, json: WalkRoutesTests.walk(to: b))
            XCTAssertEqual(walk.status, 201, walk.text)
            let walkID = try XCTUnwrap(walk.json["walk_id"] as? String)

            let inboxReply = try await inbox
            XCTAssertEqual(inboxReply.status, 200)
            // (The mate request's entry may come too, when it was projected after the stream opened.)
            let entries = Frames.frames(inboxReply.text).frames.filter { $0.event == "notification" && $0.data?.contains(walkID) == true }
            XCTAssertEqual(entries.count, 1, "the walk reaches the inbox stream once: \(inboxReply.text)")
            let appReply = try await app
            XCTAssertEqual(appReply.status, 200)
            XCTAssertFalse(
                appReply.text.contains("event: notification"),
                "the app stream waits until the chats projector passes too: \(appReply.text)"
            )
        }
        try owner.execute("SELECT pg_advisory_unlock($1::int, hashtext('chats'))", [ProjectionRunner.lockClass])
    }

    func testMessagesReadAndTypingArriveAndResumeOnce() async throws {
        let fixture = try GatewayFixture("chat_stream") {
            $0.streamMaxDuration = .milliseconds(2500)
            $0.heartbeatInterval = .milliseconds(300)
        }
        try await fixture.run { client in
            let a = try await client.signUp("streama")
            let b = try await client.signUp("streamb")
            let c = try await client.signUp("streamc")
            try await client.makeMates(a, b)
            let settle = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: #"{"text": "before"}"#)
            _ = try await client.send(.get, "/v1/chats", token: b.token, headers: ["Min-Log-Position": settle.header("Log-Position")!])

            // While b listens: a message, typing, and a's read marker.
            async let live = client.send(.get, "/v1/me/stream", token: b.token)
            async let outsider = client.send(.get, "/v1/me/stream", token: c.token)
            try await Task.sleep(for: .milliseconds(700))
            let first = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: #"{"text": "first live"}"#)
            let typed = try await client.send(.post, "/v1/chats/\(b.id)/typing", token: a.token)
            XCTAssertEqual(typed.status, 204)
            let marked = try await client.send(.put, "/v1/chats/\(b.id)/read", token: a.token, json: #"{"up_to": 1}"#)
            XCTAssertEqual(marked.status, 204)
            let reply = try await live
            XCTAssertEqual(reply.status, 200)
            XCTAssertEqual(reply.header("Content-Type"), "text/event-stream")
            let frames = Frames.frames(reply.text).frames
            let messages = frames.filter { $0.event == "message" }
            XCTAssertEqual(messages.map { Self.json($0)["text"] as? String }, ["first live"], reply.text)
            XCTAssertEqual(messages.first.map { Self.json($0)["user_id"] as? String }, a.id, "user_id names the conversation")
            XCTAssertEqual(messages.first?.id, first.header("Log-Position"), "the SSE id is the event's log position")
            let typing = frames.first { $0.event == "typing" }
            XCTAssertEqual(typing.map { Self.json($0)["user_id"] as? String }, a.id, reply.text)
            XCTAssertNil(typing?.id, "typing is live only")
            let read = frames.first { $0.event == "read" }
            XCTAssertEqual(read.map { Self.json($0)["up_to"] as? Int }, 1, reply.text)
            XCTAssertEqual(read.map { Self.json($0)["user_id"] as? String }, a.id)
            let other = try await outsider
            XCTAssertFalse(other.text.contains("first live"), "another user's stream never carries it")
            XCTAssertFalse(other.text.contains("event: typing"))

            // Cut: while b is away, three messages (one then unsent) and an inbox entry.
            var missed: [String] = []
            for text in ["away one", "away two", "away three"] {
                let sent = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: #"{"text": "\#(text)"}"#)
                missed.append(sent.json["message_id"] as! String)
            }
            let unsent = try await client.send(.delete, "/v1/chats/\(b.id)/messages/\(missed[1])", token: a.token)
            XCTAssertEqual(unsent.status, 200)
            let walk = try await client.send(.post, "/v1/walks", token: a.token, json: WalkRoutesTests.walk(to: b))
            XCTAssertEqual(walk.status, 201)
            let resumed = try await client.send(.get, "/v1/me/stream", token: b.token, headers: ["Last-Event-ID": messages.first?.id ?? ""])
            let again = Frames.frames(resumed.text).frames
            let ids = again.filter { $0.event == "message" }.map { Self.json($0)["message_id"] as? String }
            XCTAssertEqual(
                ids,
                [missed[0], missed[2], missed[1]],
                "each missed message once, in log order of its last change: \(resumed.text)"
            )
            XCTAssertEqual(
                again.first { Self.json($0)["message_id"] as? String == missed[1] }.map { Self.json($0)["unsent"] as? Bool },
                true
            )
            XCTAssertEqual(again.filter { $0.event == "notification" }.count, 1, "the missed inbox entry too")
            XCTAssertEqual(Set(again.compactMap(\.id)).count, again.compactMap(\.id).count, "no duplicates")
            // From the last id: nothing more.
            let last = try XCTUnwrap(again.compactMap(\.id).last)
            let none = try await client.send(.get, "/v1/me/stream", token: b.token, headers: ["Last-Event-ID": last])
            XCTAssertEqual(Frames.frames(none.text).frames.filter { $0.id != nil }.count, 0, none.text)
            // The inbox-only stream still carries the inbox, and no chat.
            let inbox = try await client.send(.get, "/v1/me/notifications/stream", token: b.token, headers: ["Last-Event-ID": "0.0"])
            XCTAssertTrue(inbox.text.contains("event: notification"))
            XCTAssertFalse(inbox.text.contains("event: message"))

            XCTAssertError(
                try await client.send(.get, "/v1/me/stream?viewing=nope", token: b.token),
                400,
                "validation_failed",
                field: "viewing"
            )
            XCTAssertError(
                try await client.send(.get, "/v1/me/stream", token: b.token, headers: ["Last-Event-ID": "x"]),
                400,
                "validation_failed",
                field: "Last-Event-ID"
            )
        }
    }

    /// On a real socket: a message reaches the mate's open stream within 1 s of its send.
    /// Read markers and typing come through the process's one LISTEN connection, which also
    /// carries the log's appends, session revocations and key erasures.
    func testTheProcessListensOnOneConnection() async throws {
        try await GatewayFixture("chat_one_listen").run { client in
            let first = try await client.listeners()
            XCTAssertEqual(first, 1)
            // Give a second listener, if any, the time to connect too.
            try await Task.sleep(for: .milliseconds(300))
            let later = try await client.listeners()
            XCTAssertEqual(later, 1)
        }
    }

    func testAMessageReachesTheMatesStreamWithinASecond() async throws {
        let fixture = try GatewayFixture("chat_stream_live") { $0.heartbeatInterval = .milliseconds(500) }
        try await fixture.run(.live) { client in
            let a = try await client.signUp("livea")
            let b = try await client.signUp("liveb")
            try await client.makeMates(a, b)
            let port = try XCTUnwrap(client.raw.port)
            let fd = try Self.open(port: port, path: "/v1/me/stream", token: b.token)
            defer { close(fd) }
            try await Task.sleep(for: .milliseconds(300))
            var latencies: [Double] = []
            for index in 0..<3 {
                let start = ContinuousClock.now
                let sent = try await client.send(.post, "/v1/chats/\(b.id)/messages", token: a.token, json: #"{"text": "ping \#(index)"}"#)
                XCTAssertEqual(sent.status, 201)
                XCTAssertTrue(Self.read(fd, until: "ping \(index)", timeout: 2), "message \(index) never arrived")
                let elapsed = ContinuousClock.now - start
                latencies.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            }
            print("ChatStreamTests: send-to-stream latencies \(latencies.map { String(format: "%.3f s", $0) })")
            for latency in latencies { XCTAssertLessThan(latency, 1.0) }
        }
    }

    static func open(port: Int, path: String, token: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = "GET \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        return fd
    }

    /// Reads from `fd` until `needle` shows up (true) or `timeout` seconds pass (false).
    static func read(_ fd: Int32, until needle: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var seen = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 { seen += String(decoding: buffer.prefix(count), as: UTF8.self) }
            if seen.contains(needle) { return true }
        }
        return false
    }
}
