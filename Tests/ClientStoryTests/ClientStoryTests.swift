import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import SniffMeetClient
import XCTest

/// The app's whole story through the generated client, over AsyncHTTPClient, against a live
/// server: every answer decodes into the generated types, and each error code of these routes
/// that a client can provoke is reached once and decodes as the one error type.
final class ClientStoryTests: XCTestCase {
    func testTheWholeStoryThroughTheGeneratedClient() async throws {
        let reached = Reached()
        try await ClientFixture("clientstory").run { server in
            let bori = Phone(server)
            let coco = Phone(server)
            let stranger = Phone(server)

            // Onboarding: the nickname is free, then taken.
            let free = try await bori.client.nicknameAvailability(path: .init(nickname: "bori")).ok.body.json
            XCTAssertTrue(free.available)
            reached.expect(
                try await bori.client.nicknameAvailability(path: .init(nickname: "b")),
                "nicknameAvailability",
                "badRequest",
                "validation_failed"
            )
            let signedUp = try await bori.client.signUp(body: .json(Self.profile("bori"))).created.body.json
            bori.state.token = signedUp.token
            XCTAssertEqual(signedUp.profile.nickname, "bori")
            XCTAssertNil(signedUp.profile.profileImage)
            reached.expect(
                try await stranger.client.signUp(body: .json(Self.profile("bori"))),
                "signUp",
                "conflict",
                "nickname_taken"
            )
            var tooOld = Self.profile("old")
            tooOld.age = 120
            reached.expect(try await stranger.client.signUp(body: .json(tooOld)), "signUp", "badRequest", "validation_failed")
            reached.expect(try await stranger.client.getMe(), "getMe", "unauthorized", "unauthorized")
            let cocoUp = try await coco.client.signUp(body: .json(Self.profile("coco", dog: "Coco"))).created.body.json
            coco.state.token = cocoUp.token
            let me = try await bori.client.getMe().ok.body.json
            XCTAssertEqual(me.userId, signedUp.userId)
            let changed = try await bori.client.updateMe(body: .json(.init(dogName: "Bori II"))).ok.body.json
            XCTAssertEqual(changed.dogName, "Bori II")
            reached.expect(
                try await bori.client.updateMe(body: .json(.init(nickname: "coco"))),
                "updateMe",
                "conflict",
                "nickname_taken"
            )
            reached.expect(
                try await bori.client.updateMe(body: .json(.init(profileImage: UUID().uuidString.lowercased()))),
                "updateMe",
                "badRequest",
                "validation_failed"
            )
            reached.expect(
                try await bori.client.updateMe(body: .json(.init(dogName: String(repeating: "a", count: 20_000)))),
                "updateMe",
                "contentTooLarge",
                "body_too_large"
            )

            // A drop token, a mate request, accepted.
            let drop = try await coco.client.newDropToken().created.body.json
            XCTAssertGreaterThan(drop.expiresAt, Date())
            reached.expect(
                try await bori.client.requestMate(body: .json(.init(to: cocoUp.userId, dropToken: "not-a-token"))),
                "requestMate",
                "forbidden",
                "invalid_drop_token"
            )
            reached.expect(
                try await bori.client.requestMate(body: .json(.init(to: signedUp.userId, dropToken: drop.dropToken))),
                "requestMate",
                "badRequest",
                "cannot_request_self"
            )
            let request = try await bori.client.requestMate(body: .json(.init(to: cocoUp.userId, dropToken: drop.dropToken)))
                .created.body.json
            XCTAssertEqual(request.status, .pending)
            reached.expect(
                try await bori.client.acceptMate(path: .init(id: request.requestId)),
                "acceptMate",
                "forbidden",
                "not_addressee"
            )
            let accepted = try await coco.client.acceptMate(path: .init(id: request.requestId)).ok.body.json
            XCTAssertEqual(accepted.status, .accepted)
            reached.expect(
                try await coco.client.acceptMate(path: .init(id: request.requestId)),
                "acceptMate",
                "conflict",
                "not_pending"
            )
            reached.expect(
                try await coco.client.acceptMate(path: .init(id: UUID().uuidString.lowercased())),
                "acceptMate",
                "notFound",
                "not_found"
            )
            // Read-your-writes: the list read right after the accept, by the one who accepted, shows it.
            XCTAssertNotNil(coco.state.logPosition)
            let mates = try await coco.client.listMates().ok.body.json
            XCTAssertEqual(mates.items.map(\.userId), [signedUp.userId])
            let again = try await coco.client.newDropToken().created.body.json
            reached.expect(
                try await bori.client.requestMate(body: .json(.init(to: cocoUp.userId, dropToken: again.dropToken))),
                "requestMate",
                "conflict",
                "already_mates"
            )
            let card = try await bori.client.getCard(path: .init(id: cocoUp.userId)).ok.body.json
            XCTAssertEqual(card.dogName, "Coco")
            reached.expect(
                try await bori.client.getCard(path: .init(id: UUID().uuidString.lowercased())),
                "getCard",
                "notFound",
                "not_found"
            )

            // A walk, answered.
            let walk = try await bori.client.sendWalk(
                body: .json(.init(to: cocoUp.userId, message: "Seoul Forest at 5?", latitude: 37.5444, longitude: 127.0374))
            ).created.body.json
            XCTAssertEqual(walk.status, .pending)
            reached.expect(
                try await stranger.client.sendWalk(
                    body: .json(.init(to: cocoUp.userId, message: "Hi", latitude: 37.5, longitude: 127.0))
                ),
                "sendWalk",
                "unauthorized",
                "unauthorized"
            )
            reached.expect(
                try await bori.client.respondWalk(path: .init(id: walk.walkId), body: .json(.init(answer: .accept))),
                "respondWalk",
                "forbidden",
                "not_addressee"
            )
            let answered = try await coco.client.respondWalk(path: .init(id: walk.walkId), body: .json(.init(answer: .accept)))
                .ok.body.json
            XCTAssertEqual(answered.status, .accepted)
            reached.expect(
                try await coco.client.respondWalk(path: .init(id: walk.walkId), body: .json(.init(answer: .decline))),
                "respondWalk",
                "conflict",
                "already_answered"
            )
            reached.expect(
                try await bori.client.cancelWalk(path: .init(id: walk.walkId)),
                "cancelWalk",
                "conflict",
                "already_answered"
            )
            reached.expect(
                try await coco.client.getWalk(path: .init(id: UUID().uuidString.lowercased())),
                "getWalk",
                "notFound",
                "not_found"
            )
            let walks = try await bori.client.listWalks().ok.body.json
            XCTAssertEqual(walks.items.map(\.walkId), [walk.walkId])

            // The inbox.
            let inbox = try await coco.client.listNotifications().ok.body.json
            XCTAssertEqual(Set(inbox.items.map(\.category)), [.mateRequested, .walkRequested])
            let first = try XCTUnwrap(inbox.items.first)
            _ = try await coco.client.dismissNotification(path: .init(id: first.notificationId)).noContent
            reached.expect(
                try await coco.client.dismissNotification(path: .init(id: UUID().uuidString.lowercased())),
                "dismissNotification",
                "notFound",
                "not_found"
            )

            // Chat, with both live streams open.
            // Coco's: four messages (sent, sent, edited, unsent) and Bori typing; Bori's: the read marker.
            let cocoEvents = Task {
                try await Self.collect(LiveEvents(client: coco.client), until: 5) { event in
                    switch event {
                    case .message, .typing: true
                    default: false
                    }
                }
            }
            let boriEvents = Task {
                try await Self.collect(LiveEvents(client: bori.client), until: 1) { event in
                    if case .read = event { return true } else { return false }
                }
            }
            try await Task.sleep(for: .milliseconds(700))
            let sent = try await bori.client.sendChatMessage(path: .init(userId: cocoUp.userId), body: .json(.init(text: "Running late")))
                .created.body.json
            XCTAssertEqual(sent.seq, 1)
            reached.expect(
                try await bori.client.sendChatMessage(path: .init(userId: "not-a-uuid"), body: .json(.init(text: "?"))),
                "sendChatMessage",
                "notFound",
                "not_found"
            )
            reached.expect(
                try await bori.client.sendChatMessage(path: .init(userId: cocoUp.userId), body: .json(.init())),
                "sendChatMessage",
                "badRequest",
                "validation_failed"
            )
            // The same Idempotency-Key with another message.
            _ = try await bori.client.sendChatMessage(
                path: .init(userId: cocoUp.userId),
                headers: .init(idempotencyKey: "app-message-1"),
                body: .json(.init(text: "On my way"))
            ).created
            reached.expect(
                try await bori.client.sendChatMessage(
                    path: .init(userId: cocoUp.userId),
                    headers: .init(idempotencyKey: "app-message-1"),
                    body: .json(.init(text: "Something else"))
                ),
                "sendChatMessage",
                "unprocessableContent",
                "idempotency_key_reused"
            )
            let edited = try await bori.client.editChatMessage(
                path: .init(userId: cocoUp.userId, messageId: sent.messageId),
                body: .json(.init(text: "Running late, 10 min"))
            ).ok.body.json
            XCTAssertNotNil(edited.editedAt)
            reached.expect(
                try await coco.client.editChatMessage(
                    path: .init(userId: signedUp.userId, messageId: sent.messageId),
                    body: .json(.init(text: "mine now"))
                ),
                "editChatMessage",
                "forbidden",
                "not_sender"
            )
            let unsent = try await bori.client.unsendChatMessage(path: .init(userId: cocoUp.userId, messageId: sent.messageId))
                .ok.body.json
            XCTAssertTrue(unsent.unsent)
            XCTAssertNil(unsent.text)
            reached.expect(
                try await bori.client.editChatMessage(
                    path: .init(userId: cocoUp.userId, messageId: sent.messageId),
                    body: .json(.init(text: "back"))
                ),
                "editChatMessage",
                "conflict",
                "message_unsent"
            )
            _ = try await coco.client.markChatRead(path: .init(userId: signedUp.userId), body: .json(.init(upTo: 2))).noContent
            reached.expect(
                try await coco.client.markChatRead(path: .init(userId: UUID().uuidString.lowercased()), body: .json(.init(upTo: 1))),
                "markChatRead",
                "notFound",
                "not_found"
            )
            _ = try await bori.client.chatTyping(path: .init(userId: cocoUp.userId)).noContent
            let conversations = try await coco.client.listChats().ok.body.json
            XCTAssertEqual(conversations.items.map(\.userId), [signedUp.userId])
            let messages = try await coco.client.listChatMessages(path: .init(userId: signedUp.userId)).ok.body.json
            XCTAssertEqual(messages.items.count, 2)
            let seen = try await cocoEvents.value
            XCTAssertEqual(
                seen.compactMap { if case .message(_, let m) = $0 { m.seq } else { nil } },
                [1, 2, 1, 1],
                "sent, sent, edited, unsent: \(seen)"
            )
            XCTAssertTrue(seen.contains { if case .message(_, let m) = $0 { m.unsent } else { false } })
            XCTAssertTrue(seen.contains(.typing(userID: signedUp.userId)), "\(seen)")
            let boriSaw = try await boriEvents.value
            XCTAssertTrue(boriSaw.contains(.read(userID: cocoUp.userId, upTo: 2)), "\(boriSaw)")

            // The walk log: upload, the mate's view, GPX.
            let log = try await bori.client.recordWalkLog(
                body: .json(.init(walkId: walk.walkId, points: Self.track()))
            ).created.body.json
            XCTAssertEqual(log.walkId, walk.walkId)
            XCTAssertGreaterThan(log.distanceM, 500)
            reached.expect(
                try await bori.client.recordWalkLog(body: .json(.init(points: Array(Self.track().prefix(1))))),
                "recordWalkLog",
                "badRequest",
                "validation_failed"
            )
            // Bori's write, Coco's read: Coco's phone waits for Bori's position.
            let matesView = try await coco.client.getWalkLog(
                path: .init(id: log.walkLogId),
                headers: .init(minLogPosition: bori.state.logPosition?.description)
            ).ok.body.json
            XCTAssertEqual(matesView.owner.userId, signedUp.userId)
            let theirs = try await coco.client.listUsersWalkLogs(path: .init(id: signedUp.userId)).ok.body.json
            XCTAssertEqual(theirs.items.map(\.walkLogId), [log.walkLogId])
            reached.expect(
                try await coco.client.listUsersWalkLogs(path: .init(id: UUID().uuidString.lowercased())),
                "listUsersWalkLogs",
                "notFound",
                "not_found"
            )
            let gpx = try await bori.client.exportWalkLog(path: .init(id: log.walkLogId)).ok.body.applicationGpxXml
            let text = try await String(collecting: gpx, upTo: 1 << 20)
            XCTAssertTrue(text.contains("<gpx"), text)
            reached.expect(
                try await coco.client.exportWalkLog(path: .init(id: log.walkLogId)),
                "exportWalkLog",
                "notFound",
                "not_found"
            )

            // A report, a block.
            let filed = try await coco.client.report(
                body: .json(.init(userId: signedUp.userId, reason: .spam, walkId: walk.walkId, note: "test"))
            ).created.body.json
            XCTAssertFalse(filed.reportId.isEmpty)
            reached.expect(
                try await coco.client.report(body: .json(.init(userId: UUID().uuidString.lowercased(), reason: .other))),
                "report",
                "notFound",
                "not_found"
            )
            reached.expect(
                try await bori.client.block(path: .init(userId: signedUp.userId)),
                "block",
                "badRequest",
                "validation_failed"
            )
            reached.expect(try await bori.client.block(path: .init(userId: "nobody")), "block", "notFound", "not_found")
            reached.expect(
                try await bori.client.unpair(path: .init(userId: UUID().uuidString.lowercased())),
                "unpair",
                "notFound",
                "not_mates"
            )
            _ = try await bori.client.block(path: .init(userId: cocoUp.userId)).noContent
            reached.expect(
                try await bori.client.sendWalk(
                    body: .json(.init(to: cocoUp.userId, message: "Still on?", latitude: 37.5, longitude: 127.0))
                ),
                "sendWalk",
                "conflict",
                "not_mates"
            )
            let blocks = try await bori.client.listBlocks().ok.body.json
            XCTAssertEqual(blocks.items.map(\.userId), [cocoUp.userId])
            reached.expect(
                try await coco.client.sendChatMessage(path: .init(userId: signedUp.userId), body: .json(.init(text: "?"))),
                "sendChatMessage",
                "conflict",
                "not_mates"
            )
            reached.expect(
                try await bori.client.unblock(path: .init(userId: signedUp.userId)),
                "unblock",
                "badRequest",
                "validation_failed"
            )
            _ = try await bori.client.unblock(path: .init(userId: cocoUp.userId)).noContent

            // A second phone with a transfer code; the sessions.
            let code = try await bori.client.newTransferCode().created.body.json
            let secondPhone = Phone(server)
            reached.expect(
                try await secondPhone.client.signIn(body: .json(.init(transferCode: "AAAAAAAAAAAAAAAAAAAAAAAAAA"))),
                "signIn",
                "forbidden",
                "invalid_transfer_code"
            )
            let signedIn = try await secondPhone.client.signIn(body: .json(.init(transferCode: code.transferCode))).created.body.json
            secondPhone.state.token = signedIn.token
            reached.expect(
                try await stranger.client.signIn(body: .json(.init(transferCode: code.transferCode))),
                "signIn",
                "forbidden",
                "invalid_transfer_code"
            )
            let sessions = try await bori.client.listSessions().ok.body.json
            XCTAssertEqual(sessions.items.count, 2)
            let other = try XCTUnwrap(sessions.items.first { !$0.current })
            reached.expect(
                try await bori.client.signOutElsewhere(path: .init(id: UUID().uuidString.lowercased())),
                "signOutElsewhere",
                "notFound",
                "not_found"
            )
            _ = try await bori.client.signOutElsewhere(path: .init(id: other.sessionId)).noContent
            reached.expect(try await secondPhone.client.getMe(), "getMe", "unauthorized", "unauthorized")

            // Deletion.
            let deleted = try await coco.client.deleteMe().noContent
            reached.expect(try await coco.client.deleteMe(), "deleteMe", "unauthorized", "unauthorized")
            reached.expect(
                try await bori.client.getCard(
                    path: .init(id: cocoUp.userId),
                    headers: .init(minLogPosition: deleted.headers.logPosition)
                ),
                "getCard",
                "notFound",
                "not_found"
            )
        }
        // Each (operation, code) once; the retry test reaches `sendChatMessage rate_limited`.
        XCTAssertEqual(reached.all.sorted(), Self.errorCodesOfTheStory, reached.all.sorted().joined(separator: "\n"))
    }

    /// The live stream resumes after the server closes it (here every second) and loses
    /// nothing: every message sent across the cuts arrives once, in order.
    func testTheLiveStreamResumesAfterTheServerClosesItAndLosesNothing() async throws {
        try await ClientFixture("clientresume") { $0.streamMaxDuration = .seconds(1) }.run { server in
            let bori = Phone(server)
            let coco = Phone(server)
            let boriID = try await Self.signUp(bori, "bori")
            let cocoID = try await Self.signUp(coco, "coco")
            let drop = try await coco.client.newDropToken().created.body.json
            let request = try await bori.client.requestMate(body: .json(.init(to: cocoID, dropToken: drop.dropToken))).created.body.json
            _ = try await coco.client.acceptMate(path: .init(id: request.requestId)).ok

            let count = 8
            // From the accept's position on: nothing sent after it may be missed, not even the first.
            let start = try XCTUnwrap(coco.state.logPosition).description
            let listener = Task { () -> ([Int], Int) in
                var iterator = LiveEvents(client: coco.client, lastEventID: start, reconnectDelay: 0.1).makeAsyncIterator()
                var seqs: [Int] = []
                while seqs.count < count, let event = try await iterator.next() {
                    if case .message(let conversation, let message) = event {
                        XCTAssertEqual(conversation, boriID)
                        seqs.append(message.seq)
                    }
                }
                return (seqs, iterator.connections)
            }
            for n in 1...count {
                _ = try await bori.client.sendChatMessage(path: .init(userId: cocoID), body: .json(.init(text: "message \(n)")))
                    .created
                try await Task.sleep(for: .milliseconds(400))  // 8 x 0.4 s: across at least two cuts
            }
            let (seqs, connections) = try await listener.value
            XCTAssertEqual(seqs, Array(1...count), "each message once, in order")
            XCTAssertGreaterThanOrEqual(connections, 3, "the server closed the stream at least twice meanwhile")
        }
    }

    /// Past the chat budget (here 2 messages, then 2 a second) the server answers `429` with
    /// `Retry-After`; the client waits and sends again with the same Idempotency-Key, so every
    /// message arrives once.
    func testRetryAfterIsHonouredAndTheRetriedCommandKeepsItsKey() async throws {
        let fixture = try ClientFixture("clientretry") {
            $0.rateLimits = .init(ip: nil, signUp: nil, user: nil, messages: .init(burst: 2, perSecond: 2))
        }
        try await fixture.run { server in
            let bori = Phone(server)
            let coco = Phone(server)
            let boriID = try await Self.signUp(bori, "bori")
            let cocoID = try await Self.signUp(coco, "coco")
            let drop = try await coco.client.newDropToken().created.body.json
            let request = try await bori.client.requestMate(body: .json(.init(to: cocoID, dropToken: drop.dropToken))).created.body.json
            _ = try await coco.client.acceptMate(path: .init(id: request.requestId)).ok

            // Without retries the budget shows: a 429 with Retry-After, decoded as the error type.
            let impatient = SniffMeetClient.make(
                serverURL: server,
                transport: AsyncHTTPClientTransport(),
                state: bori.state,
                configuration: .init(retry: .init(maxRetries: 0))
            )
            var refused: (String, SniffMeetError)?
            for n in 0..<5 where refused == nil {
                refused = errorAnswer(
                    try await impatient.sendChatMessage(path: .init(userId: cocoID), body: .json(.init(text: "burst \(n)")))
                )
            }
            XCTAssertEqual(refused?.0, "tooManyRequests")
            XCTAssertEqual(refused?.1.error.code, "rate_limited")

            // With them, every send succeeds once, and each retry carries its command's key.
            let recorder = Recorder()
            let patient = Client(
                serverURL: server,
                configuration: SniffMeetClient.runtimeConfiguration,
                transport: AsyncHTTPClientTransport(),
                middlewares: SniffMeetClient.middlewares(state: bori.state) + [recorder]
            )
            var seqs: [Int] = []
            for n in 0..<6 {
                let sent = try await patient.sendChatMessage(path: .init(userId: cocoID), body: .json(.init(text: "patient \(n)")))
                    .created.body.json
                seqs.append(sent.seq)
            }
            XCTAssertEqual(seqs, Array(seqs[0]..<(seqs[0] + 6)), "no message twice, none lost")
            // Another phone's writes: read-your-writes across users takes the writer's position.
            let messages = try await coco.client.listChatMessages(
                path: .init(userId: boriID),
                headers: .init(minLogPosition: bori.state.logPosition?.description)
            ).ok.body.json
            XCTAssertEqual(messages.items.filter { $0.text?.hasPrefix("patient") == true }.count, 6)
            let tries = recorder.tries
            XCTAssertEqual(Set(tries.map(\.key)).count, 6, "one key per command: \(tries)")
            XCTAssertGreaterThan(tries.count, 6, "some were refused and retried: \(tries)")
            for key in Set(tries.map(\.key)) {
                XCTAssertEqual(tries.filter { $0.key == key }.last?.status, 201, "\(tries)")
            }
        }
    }

    static let errorCodesOfTheStory = [
        "acceptMate not_addressee",
        "acceptMate not_found",
        "acceptMate not_pending",
        "block not_found",
        "block validation_failed",
        "cancelWalk already_answered",
        "deleteMe unauthorized",
        "dismissNotification not_found",
        "editChatMessage message_unsent",
        "editChatMessage not_sender",
        "exportWalkLog not_found",
        "getCard not_found",
        "getMe unauthorized",
        "getWalk not_found",
        "listUsersWalkLogs not_found",
        "markChatRead not_found",
        "nicknameAvailability validation_failed",
        "recordWalkLog validation_failed",
        "report not_found",
        "requestMate already_mates",
        "requestMate cannot_request_self",
        "requestMate invalid_drop_token",
        "respondWalk already_answered",
        "respondWalk not_addressee",
        "sendChatMessage idempotency_key_reused",
        "sendChatMessage not_found",
        "sendChatMessage not_mates",
        "sendChatMessage validation_failed",
        "sendWalk not_mates",
        "sendWalk unauthorized",
        "signIn invalid_transfer_code",
        "signOutElsewhere not_found",
        "signUp nickname_taken",
        "signUp validation_failed",
        "unblock validation_failed",
        "unpair not_mates",
        "updateMe body_too_large",
        "updateMe nickname_taken",
        "updateMe validation_failed",
    ]

    static func signUp(_ phone: Phone, _ nickname: String) async throws -> String {
        let answer = try await phone.client.signUp(body: .json(profile(nickname))).created.body.json
        phone.state.token = answer.token
        return answer.userId
    }

    static func profile(_ nickname: String, dog: String = "Bori") -> Components.Schemas.SignUp {
        .init(
            nickname: nickname,
            dogName: dog,
            age: 3,
            sex: .female,
            neutered: true,
            size: .small,
            keywords: [.smart, .shy]
        )
    }

    /// Ten minutes of walking north at 1.4 m/s, a fix a second.
    static func track() -> [Components.Schemas.NewWalkLog.PointsPayloadPayload] {
        let start = Date(timeIntervalSince1970: 1_764_064_800)
        return (0...600).map { s in
            .init(
                time: start.addingTimeInterval(Double(s)),
                latitude: 37.5665 + Double(s) * 1.4 / 111_000,
                longitude: 126.9780,
                accuracy: 5
            )
        }
    }

    /// The first `count` events of `events` that `counts` (all by default).
    static func collect(
        _ events: LiveEvents,
        until count: Int,
        counting counts: @escaping @Sendable (LiveEvent) -> Bool = { _ in true }
    ) async throws -> [LiveEvent] {
        var seen: [LiveEvent] = []
        var counted = 0
        for try await event in events {
            seen.append(event)
            if counts(event) { counted += 1 }
            if counted >= count { break }
        }
        return seen
    }
}

/// Records each try's Idempotency-Key and status, as the server saw them (the innermost middleware).
final class Recorder: ClientMiddleware, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [(key: String, status: Int)] = []
    var tries: [(key: String, status: Int)] { lock.withLock { recorded } }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        let key = request.headerFields[HTTPField.Name("Idempotency-Key")!] ?? ""
        lock.withLock { recorded.append((key, response.status.code)) }
        return (response, responseBody)
    }
}
