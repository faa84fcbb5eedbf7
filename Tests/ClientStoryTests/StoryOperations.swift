import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import SniffMeetClient
import XCTest

/// What the story's calls need: ids of real things (`StoryOperations.setUp`) or of nothing
/// (`StoryIDs.random`, for answers that come before any lookup).
struct StoryIDs: Sendable {
    /// The caller's mate.
    var mate: String
    /// A mate request addressed to the mate, pending.
    var request: String
    /// A walk the caller sent to the mate, pending.
    var walk: String
    /// A chat message the caller sent to the mate.
    var message: String
    var walkLog: String
    /// One of the caller's notifications.
    var notification: String
    var dropToken: String
    var transferCode: String
    /// A sign-up's nickname.
    var nickname = "newbie"

    /// Ids that are no UUIDs.
    static func notUUIDs() -> StoryIDs {
        StoryIDs(
            mate: "nobody",
            request: "nothing",
            walk: "nowalk",
            message: "nomessage",
            walkLog: "nolog",
            notification: "nonotice",
            dropToken: "no-such-drop-token",
            transferCode: "AAAAAAAAAAAAAAAAAAAAAAAAAA"
        )
    }

    static func random() -> StoryIDs {
        let id = { UUID().uuidString.lowercased() }
        return StoryIDs(
            mate: id(),
            request: id(),
            walk: id(),
            message: id(),
            walkLog: id(),
            notification: id(),
            dropToken: "no-such-drop-token",
            transferCode: "AAAAAAAAAAAAAAAAAAAAAAAAAA"
        )
    }
}

/// What an operation answered: its status and, for an error answer, its code (decoded as the
/// generated error type).
struct Answered: Equatable, CustomStringConvertible {
    var status: Int
    var code: String?
    /// The status is not among the operation's documented ones (the generated `undocumented` case).
    var undocumented = false
    var description: String { undocumented ? "\(status) (undocumented)" : code.map { "\(status) \($0)" } ?? "\(status)" }

    /// The status of each case name the generator gives an answer.
    static let statuses = [
        "ok": 200, "created": 201, "noContent": 204, "notModified": 304, "badRequest": 400, "unauthorized": 401,
        "forbidden": 403, "notFound": 404, "conflict": 409, "gone": 410, "contentTooLarge": 413,
        "unsupportedMediaType": 415, "unprocessableContent": 422, "tooManyRequests": 429, "serviceUnavailable": 503,
    ]

    init(status: Int, code: String?) {
        self.status = status
        self.code = code
    }

    init(_ output: Any) {
        let answer = Mirror(reflecting: output).children.first
        let label = answer?.label ?? "?"
        if label == "undocumented", let status = answer.flatMap({ Mirror(reflecting: $0.value).children.first?.value as? Int }) {
            // An answer whose status the document does not list for this operation.
            self.status = status
            code = nil
            undocumented = true
            return
        }
        status = Self.statuses[label] ?? -1
        code = errorAnswer(output)?.error.error.code
    }
}

/// Every operation of the story, each with one well-formed call (as the phone of the caller
/// would make it), so that the answers every route shares (no token, budget spent, database
/// down or slow, a malformed body) are tried on all of them alike.
enum StoryOperations {
    typealias Call = @Sendable (Client, StoryIDs) async throws -> Any

    /// Operations called without a bearer token (before sign-up, a new phone).
    static let anonymous: Set<String> = ["signUp", "signIn", "nicknameAvailability"]

    static let calls: [(operation: String, call: Call)] = [
        // Onboarding, the profile.
        ("nicknameAvailability", { c, _ in try await c.nicknameAvailability(path: .init(nickname: "newbie")) }),
        ("signUp", { c, ids in try await c.signUp(body: .json(ClientStoryTests.profile(ids.nickname))) }),
        ("getMe", { c, _ in try await c.getMe() }),
        ("updateMe", { c, _ in try await c.updateMe(body: .json(.init(dogName: "Bori III"))) }),
        // Drop token, mate request, accept or decline or cancel.
        ("newDropToken", { c, _ in try await c.newDropToken() }),
        ("requestMate", { c, ids in try await c.requestMate(body: .json(.init(to: ids.mate, dropToken: ids.dropToken))) }),
        ("acceptMate", { c, ids in try await c.acceptMate(path: .init(id: ids.request)) }),
        ("declineMate", { c, ids in try await c.declineMate(path: .init(id: ids.request)) }),
        ("cancelMateRequest", { c, ids in try await c.cancelMateRequest(path: .init(id: ids.request)) }),
        ("listMates", { c, _ in try await c.listMates() }),
        ("getCard", { c, ids in try await c.getCard(path: .init(id: ids.mate)) }),
        ("unpair", { c, ids in try await c.unpair(path: .init(userId: ids.mate)) }),
        // Walks.
        (
            "sendWalk",
            { c, ids in
                try await c.sendWalk(body: .json(.init(to: ids.mate, message: "Park?", latitude: 37.5444, longitude: 127.0374)))
            }
        ),
        ("respondWalk", { c, ids in try await c.respondWalk(path: .init(id: ids.walk), body: .json(.init(answer: .accept))) }),
        ("cancelWalk", { c, ids in try await c.cancelWalk(path: .init(id: ids.walk)) }),
        ("getWalk", { c, ids in try await c.getWalk(path: .init(id: ids.walk)) }),
        ("listWalks", { c, _ in try await c.listWalks() }),
        // The inbox.
        ("listNotifications", { c, _ in try await c.listNotifications() }),
        ("dismissNotification", { c, ids in try await c.dismissNotification(path: .init(id: ids.notification)) }),
        // Chat.
        ("sendChatMessage", { c, ids in try await c.sendChatMessage(path: .init(userId: ids.mate), body: .json(.init(text: "Hi"))) }),
        (
            "editChatMessage",
            { c, ids in
                try await c.editChatMessage(path: .init(userId: ids.mate, messageId: ids.message), body: .json(.init(text: "Hi!")))
            }
        ),
        ("unsendChatMessage", { c, ids in try await c.unsendChatMessage(path: .init(userId: ids.mate, messageId: ids.message)) }),
        ("markChatRead", { c, ids in try await c.markChatRead(path: .init(userId: ids.mate), body: .json(.init(upTo: 1))) }),
        ("chatTyping", { c, ids in try await c.chatTyping(path: .init(userId: ids.mate)) }),
        ("listChats", { c, _ in try await c.listChats() }),
        ("listChatMessages", { c, ids in try await c.listChatMessages(path: .init(userId: ids.mate)) }),
        // A stream that opens is dropped unread; the fixture's streams end within a second.
        ("meStream", { c, _ in try await c.meStream() }),
        // The walk log.
        ("recordWalkLog", { c, _ in try await c.recordWalkLog(body: .json(.init(points: ClientStoryTests.track()))) }),
        ("getWalkLog", { c, ids in try await c.getWalkLog(path: .init(id: ids.walkLog)) }),
        ("listUsersWalkLogs", { c, ids in try await c.listUsersWalkLogs(path: .init(id: ids.mate)) }),
        ("exportWalkLog", { c, ids in try await c.exportWalkLog(path: .init(id: ids.walkLog)) }),
        // Safety.
        ("report", { c, ids in try await c.report(body: .json(.init(userId: ids.mate, reason: .spam))) }),
        ("block", { c, ids in try await c.block(path: .init(userId: ids.mate)) }),
        ("unblock", { c, ids in try await c.unblock(path: .init(userId: ids.mate)) }),
        ("listBlocks", { c, _ in try await c.listBlocks() }),
        // A second phone, the sessions.
        ("newTransferCode", { c, _ in try await c.newTransferCode() }),
        ("signIn", { c, ids in try await c.signIn(body: .json(.init(transferCode: ids.transferCode))) }),
        ("listSessions", { c, _ in try await c.listSessions() }),
        ("signOutElsewhere", { c, _ in try await c.signOutElsewhere(path: .init(id: UUID().uuidString.lowercased())) }),
        // Deletion, last: a sweep that gets this far with a good token has deleted the caller.
        ("deleteMe", { c, _ in try await c.deleteMe() }),
    ]

    static var operations: [String] { calls.map(\.operation) }

    /// The operations that take a body (POST, PUT, PATCH; even an empty one is read).
    static var bodied: Set<String> { Set(operations.filter { ["POST", "PUT", "PATCH"].contains(DocumentedErrorCodes.methods[$0]) }) }

    /// The operations that write (any method but GET).
    static var writes: Set<String> { Set(operations.filter { DocumentedErrorCodes.methods[$0] != "GET" }) }

    /// Calls every operation once, one after the other, the anonymous ones with `anonymous`,
    /// the others with `signedIn`; what each answered.
    static func callAll(
        signedIn: Client,
        anonymous: Client,
        _ ids: StoryIDs,
        only: Set<String>? = nil
    ) async throws -> [String: Answered] {
        var answers: [String: Answered] = [:]
        for (operation, call) in calls where only?.contains(operation) ?? true {
            answers[operation] = Answered(try await call(Self.anonymous.contains(operation) ? anonymous : signedIn, ids))
        }
        return answers
    }

    /// `callAll` with every call at once.
    static func callAllAtOnce(signedIn: Client, anonymous: Client, _ ids: StoryIDs) async throws -> [String: Answered] {
        try await withThrowingTaskGroup(of: (String, Answered).self) { group in
            for (operation, call) in calls {
                let client = Self.anonymous.contains(operation) ? anonymous : signedIn
                group.addTask { (operation, Answered(try await call(client, ids))) }
            }
            var answers: [String: Answered] = [:]
            for try await (operation, answer) in group { answers[operation] = answer }
            return answers
        }
    }
}

/// Changes requests the way a broken or hostile client would, below the generated code (which
/// only ever sends well-formed requests): header fields set, and the body of every POST, PUT
/// and PATCH replaced (an empty one when the operation has none). The answer still goes through
/// the generated code, so it decodes as the operation's documented error answer.
struct Tamper: ClientMiddleware {
    var headers: [String: String] = [:]
    /// An `Idempotency-Key` of this prefix and the operation's id: one key per operation.
    var keyPerOperation: String?
    var body: (@Sendable (Data) -> Data)?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        for (name, value) in headers { request.headerFields[HTTPField.Name(name)!] = value }
        if let keyPerOperation { request.headerFields[HTTPField.Name("Idempotency-Key")!] = "\(keyPerOperation)-\(operationID)" }
        guard let change = self.body, [.post, .put, .patch].contains(request.method) else {
            return try await next(request, body, baseURL)
        }
        var original = Data()
        if let body { original = try await Data(collecting: body, upTo: 4 << 20) }
        request.headerFields[.contentType] = "application/json"
        return try await next(request, HTTPBody(change(original)), baseURL)
    }
}

extension Phone {
    /// This phone's client without retries (each answer as the server gave it), with `tamper`
    /// innermost.
    func client(tamper: Tamper) -> Client {
        Client(
            serverURL: server,
            configuration: SniffMeetClient.runtimeConfiguration,
            transport: AsyncHTTPClientTransport(),
            middlewares: SniffMeetClient.middlewares(state: state, configuration: .init(retry: .init(maxRetries: 0))) + [tamper]
        )
    }
}
