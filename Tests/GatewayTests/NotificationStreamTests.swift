import Foundation
import XCTest

/// `GET /v1/me/notifications/stream`: SSE framing, ids that are log positions, resumption.
final class NotificationStreamTests: XCTestCase {
    struct Frame {
        var id: String?
        var event: String?
        var data: String?
    }

    static func frames(_ text: String) -> (frames: [Frame], comments: Int) {
        var frames: [Frame] = []
        var comments = 0
        for block in text.components(separatedBy: "\n\n") where !block.isEmpty {
            var frame = Frame()
            for line in block.split(separator: "\n") {
                if line.hasPrefix(":") {
                    comments += 1
                } else if line.hasPrefix("id: ") {
                    frame.id = String(line.dropFirst(4))
                } else if line.hasPrefix("event: ") {
                    frame.event = String(line.dropFirst(7))
                } else if line.hasPrefix("data: ") {
                    frame.data = String(line.dropFirst(6))
                }
            }
            if frame.event != nil { frames.append(frame) }
        }
        return (frames, comments)
    }

    func testStreamSendsEntriesResumesAndBeats() async throws {
        let fixture = try GatewayFixture("sse") {
            $0.streamMaxDuration = .milliseconds(2500)
            $0.heartbeatInterval = .milliseconds(300)
        }
        try await fixture.run { client in
            let a = try await client.signUp("sender")
            let b = try await client.signUp("stream")
            try await client.makeMates(a, b)
            // Let b's inbox hold the mate request before listening, so that only the walk is new.
            let marker = try await client.send(
                .patch,
                "/v1/me",
                token: b.token,
                json: "{}"
            )
            let settled = try await client.send(
                .get,
                "/v1/me/notifications",
                token: b.token,
                headers: ["Min-Log-Position": marker.header("Log-Position")!]
            )
            XCTAssertEqual(settled.items.count, 1, settled.text)
            // While b listens, a sends a walk: it arrives live.
            async let live = client.send(.get, "/v1/me/notifications/stream", token: b.token)
            try await Task.sleep(for: .milliseconds(700))
            let walk = try await client.send(.post, "/v1/walks", token: a.token, json: WalkRoutesTests.walk(to: b))
            let reply = try await live
            XCTAssertEqual(reply.status, 200)
            XCTAssertEqual(reply.header("Content-Type"), "text/event-stream")
            let (frames, comments) = Self.frames(reply.text)
            XCTAssertEqual(frames.count, 1, reply.text)
            XCTAssertEqual(frames.first?.event, "notification")
            let entry = try JSONSerialization.jsonObject(with: Data((frames.first?.data ?? "").utf8)) as? [String: Any]
            XCTAssertEqual(entry?["category"] as? String, "walk_requested")
            XCTAssertEqual(entry?["walk_id"] as? String, walk.json["walk_id"] as? String)
            XCTAssertEqual(frames.first?.id, walk.header("Log-Position"), "the SSE id is the event's log position")
            XCTAssertGreaterThanOrEqual(comments, 1, "heartbeat comments while idle")

            // Resuming from the start replays the whole inbox oldest first; from the walk's id, nothing.
            let all = Self.frames(
                try await client.send(
                    .get,
                    "/v1/me/notifications/stream",
                    token: b.token,
                    headers: ["Last-Event-ID": "0.0"]
                ).text
            ).frames
            XCTAssertEqual(
                all.compactMap { $0.data }.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                    .map { $0["category"] as? String },
                ["mate_requested", "walk_requested"]
            )
            let none = Self.frames(
                try await client.send(
                    .get,
                    "/v1/me/notifications/stream",
                    token: b.token,
                    headers: ["Last-Event-ID": frames.first?.id ?? ""]
                ).text
            ).frames
            XCTAssertEqual(none.count, 0)
            XCTAssertError(
                try await client.send(.get, "/v1/me/notifications/stream", token: b.token, headers: ["Last-Event-ID": "x"]),
                400,
                "validation_failed",
                field: "Last-Event-ID"
            )
            // Another user's stream never carries b's entries.
            let other = Self.frames(
                try await client.send(
                    .get,
                    "/v1/me/notifications/stream",
                    token: a.token,
                    headers: ["Last-Event-ID": "0.0"]
                ).text
            ).frames
            XCTAssertFalse(other.contains { $0.data?.contains("walk_requested") ?? false })
        }
    }

    /// At most `perUser` open streams per user and `perProcess` per process: `429 rate_limited`.
    func testOpenStreamsAreCapped() async throws {
        let fixture = try GatewayFixture("ssecap") {
            // Long enough that the first streams are still open when the last probe comes.
            $0.streamMaxDuration = .seconds(4)
            $0.streamLimits = .init(perUser: 2, perProcess: 3)
        }
        try await fixture.run { client in
            let a = try await client.signUp("capped")
            let b = try await client.signUp("other")
            async let first = client.send(.get, "/v1/me/notifications/stream", token: a.token)
            async let second = client.send(.get, "/v1/me/notifications/stream", token: a.token)
            try await Task.sleep(for: .milliseconds(400))
            let third = try await client.send(.get, "/v1/me/notifications/stream", token: a.token)
            XCTAssertError(third, 429, "rate_limited")
            XCTAssertNotNil(third.header("Retry-After"))
            async let others = client.send(.get, "/v1/me/notifications/stream", token: b.token)
            try await Task.sleep(for: .milliseconds(300))
            // a holds 2 and b 1: the process's 3 are taken.
            XCTAssertError(try await client.send(.get, "/v1/me/notifications/stream", token: b.token), 429, "rate_limited")
            let (one, two, three) = try await (first, second, others)
            XCTAssertEqual([one.status, two.status, three.status], [200, 200, 200])
            // Closed streams free their places.
            let again = try await client.send(.get, "/v1/me/notifications/stream", token: a.token)
            XCTAssertEqual(again.status, 200)
        }
    }

    /// Many streams of many users are served by one reader: each gets exactly its own entries.
    func testOneFeedServesManyStreams() async throws {
        let fixture = try GatewayFixture("ssemany") {
            $0.streamMaxDuration = .milliseconds(2500)
            $0.heartbeatInterval = .milliseconds(500)
        }
        try await fixture.run { client in
            let sender = try await client.signUp("sender")
            var listeners: [GatewayFixture.User] = []
            for i in 0..<6 {
                let user = try await client.signUp("lis\(i)")
                try await client.makeMates(sender, user)
                listeners.append(user)
            }
            // Let the inbox hold the mate entries first, so that only the walks are new.
            let marker = try await client.send(
                .patch,
                "/v1/me",
                token: sender.token,
                json: "{}"
            )
            let settled = try await client.send(
                .get,
                "/v1/me/notifications",
                token: sender.token,
                headers: ["Min-Log-Position": marker.header("Log-Position")!]
            )
            XCTAssertEqual(settled.status, 200)
            let replies = try await withThrowingTaskGroup(of: (String, GatewayFixture.Reply).self) { group in
                for user in listeners {
                    for _ in 0..<2 {
                        group.addTask { (user.id, try await client.send(.get, "/v1/me/notifications/stream", token: user.token)) }
                    }
                }
                try await Task.sleep(for: .milliseconds(800))
                for user in listeners {
                    let walk = try await client.send(
                        .post,
                        "/v1/walks",
                        token: sender.token,
                        json: WalkRoutesTests.walk(to: user, message: "for \(user.id)")
                    )
                    XCTAssertEqual(walk.status, 201, walk.text)
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(replies.count, 12)
            for (userID, reply) in replies {
                let frames = Self.frames(reply.text).frames
                XCTAssertEqual(frames.count, 1, reply.text)
                XCTAssertTrue(frames.first?.data?.contains("for \(userID)") ?? false, "each stream gets its own user's entry only")
            }
        }
    }

    /// A client that hangs up frees its place under the cap by the next heartbeat at the latest
    /// (the write fails), and shutting down does not wait for streams.
    func testLeavingClientFreesItsPlaceByTheNextHeartbeat() async throws {
        let fixture = try GatewayFixture("sseleave") {
            $0.heartbeatInterval = .milliseconds(500)
            $0.streamLimits = .init(perUser: 1, perProcess: 10)
        }
        try await fixture.run(.live) { client in
            let a = try await client.signUp("leaver")
            let port = try XCTUnwrap(client.raw.port)
            let first = try Self.openStream(port: port, token: a.token)
            XCTAssertTrue(first.header.hasPrefix("HTTP/1.1 200"), first.header)
            let refused = try Self.openStream(port: port, token: a.token)
            XCTAssertTrue(refused.header.hasPrefix("HTTP/1.1 429"), refused.header)
            close(refused.socket)
            close(first.socket)
            var reopened = ""
            for _ in 0..<30 where !reopened.hasPrefix("HTTP/1.1 200") {
                try await Task.sleep(for: .milliseconds(100))
                let attempt = try Self.openStream(port: port, token: a.token)
                reopened = attempt.header
                close(attempt.socket)
            }
            XCTAssertTrue(reopened.hasPrefix("HTTP/1.1 200"), reopened)
            // A stream still open when the server stops is ended by the shutdown, not awaited.
            _ = try Self.openStream(port: port, token: try await client.signUp("stayer").token)
        }
    }

    /// Opens a stream on a plain socket; returns it with the status line.
    static func openStream(port: Int, token: String) throws -> (socket: Int32, header: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        let request = "GET /v1/me/notifications/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = recv(fd, &buffer, buffer.count, 0)
        let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
        return (fd, String(text.prefix { $0 != "\r" }))
    }
}
