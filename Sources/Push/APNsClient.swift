import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// What APNs said about one push, as Apple documents its answers.
public enum APNsOutcome: Sendable, Equatable {
    /// 200.
    case delivered
    /// 410 `Unregistered`, or 400 `BadDeviceToken` / `DeviceTokenNotForTopic`: the device token is dead.
    case deadDevice(reason: String)
    /// 403 `ExpiredProviderToken`: make a new provider token and send again.
    case expiredProviderToken
    /// 429, 5xx, a timeout or a lost connection: try again later.
    case retry(reason: String)
    /// Any other refusal: this push will never go through.
    case refused(reason: String)
}

/// Sends pushes to APNs over HTTP/2 (async-http-client negotiates h2 by ALPN and multiplexes
/// every push to one host over one connection), each with the provider token and the headers
/// APNs expects.
///
/// The connection has an event loop of its own, and a batch of pushes is handed to it at once
/// through async-http-client's event-loop API: each push's request, answer and deadline then
/// stay on that one thread. Sent one Swift task per push instead, every push hopped threads
/// four to six times (a task, a cancellation actor, a deadline timer set and cancelled from
/// another thread, the answer's continuation): `perf` put a sixth of the delivery's CPU there.
public final class APNsClient: Sendable {
    let settings: APNsSettings
    let token: ProviderToken
    private let http: HTTPClient
    private let group: MultiThreadedEventLoopGroup
    private var loop: any EventLoop { group.any() }

    public init(settings: APNsSettings) throws {
        self.settings = settings
        self.token = try ProviderToken(settings: settings)
        var tls = TLSConfiguration.makeClientConfiguration()
        if let ca = settings.caFile { tls.additionalTrustRoots = [.file(ca)] }
        // No read timeout: every batch has its deadline, which ends what is still unanswered; a
        // read timeout only added timers to the connection's event loop, two per push.
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: .seconds(10), read: nil))
        configuration.httpVersion = .automatic
        // APNs never redirects.
        configuration.redirectConfiguration = .disallow
        // No spans: unused here, and making them parsed every push's URL once more.
        configuration.tracing.tracer = nil
        // The only hook async-http-client gives into a request's stream pipeline (named "debug",
        // but a supported configuration): the three flushes of each push become one.
        configuration.http2StreamChannelDebugInitializer = { FlushCoalescingHandler.install(on: $0) }
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        http = HTTPClient(eventLoopGroupProvider: .shared(group), configuration: configuration)
    }

    /// Closes the connection and stops its event loop.
    public func shutdown() async throws {
        try await http.shutdown()
        try await group.shutdownGracefully()
    }

    /// Sends every push of `pushes` at once; never throws (every failure is an outcome).
    /// `answered(index, outcome)` is called on the connection's event loop as each answer comes;
    /// what is unanswered at `deadline` is given up as a timeout, so that a claim's lease is not
    /// outlived.
    public func send(
        _ pushes: [OutgoingPush],
        deadline: NIODeadline,
        answered: @escaping @Sendable (_ index: Int, _ outcome: APNsOutcome) -> Void
    ) {
        let jwt: String
        do { jwt = try token.jwt() } catch {
            for index in pushes.indices { answered(index, .retry(reason: "provider token: \(error)")) }
            return
        }
        var requests: [(Int, HTTPClient.Request)] = []
        requests.reserveCapacity(pushes.count)
        for (index, push) in pushes.enumerated() {
            do {
                requests.append((index, try request(for: push, jwt: jwt)))
            } catch {
                answered(index, .refused(reason: "request: \(error)"))
            }
        }
        let loop = self.loop
        let http = self.http
        loop.execute {
            let unanswered = UnansweredPushes(loop: loop)
            for (index, request) in requests {
                let task = http.execute(request: request, delegate: AnswerDelegate(), eventLoop: .delegateAndChannel(on: loop))
                unanswered.add(task)
                task.futureResult.whenComplete { result in
                    let outcome: APNsOutcome
                    switch result {
                    case .success(let answer):
                        outcome = Self.outcome(status: answer.status, body: answer.body.map { Data($0.readableBytesView) } ?? Data())
                        if outcome == .expiredProviderToken { self.token.renew(rejected: jwt) }
                    case .failure(let error as HTTPClientError) where error == .cancelled:
                        outcome = .retry(reason: "timeout")
                    case .failure:
                        outcome = .retry(reason: "transport")
                    }
                    unanswered.remove()
                    answered(index, outcome)
                }
            }
            unanswered.cancel(at: deadline)
        }
    }

    private func request(for push: OutgoingPush, jwt: String) throws -> HTTPClient.Request {
        var headers = HTTPHeaders()
        headers.reserveCapacity(7)
        headers.add(name: "authorization", value: "bearer \(jwt)")
        headers.add(name: "apns-topic", value: settings.topic)
        headers.add(name: "apns-push-type", value: "alert")
        headers.add(name: "apns-priority", value: "10")
        headers.add(name: "apns-collapse-id", value: push.notificationID.uuidString.lowercased())
        let expiry = push.expiresAt ?? push.entryAt.addingTimeInterval(settings.horizon)
        headers.add(name: "apns-expiration", value: String(max(0, Int(expiry.timeIntervalSince1970))))
        headers.add(name: "content-type", value: "application/json")
        return try HTTPClient.Request(
            url: "\(settings.baseURL)/3/device/\(push.deviceToken)",
            method: .POST,
            headers: headers,
            body: .byteBuffer(ByteBuffer(bytes: PushPayload.data(for: push)))
        )
    }

    /// The outcome of an answer (Apple's "Handling notification responses from APNs").
    static func outcome(status: Int, body: Data) -> APNsOutcome {
        // The answer to almost every push: no body to read.
        if status == 200 { return .delivered }
        let reason = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["reason"] as? String ?? "HTTP \(status)"
        switch (status, reason) {
        case (200, _): return .delivered
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .deadDevice(reason: reason)
        case (403, "ExpiredProviderToken"): return .expiredProviderToken
        case (429, _), (500...599, _): return .retry(reason: reason)
        default: return .refused(reason: reason)
        }
    }
}

/// One push's answer: its status and (for a refusal) the start of its body.
final class AnswerDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = (status: Int, body: ByteBuffer?)

    // Touched only on the task's event loop, as async-http-client calls a delegate.
    private var status = 0
    private var body: ByteBuffer?

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = Int(head.status.code)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        // APNs answers with a small JSON object; more is not read.
        if (body?.readableBytes ?? 0) < 64 * 1024 {
            var part = buffer
            body.setOrWriteBuffer(&part)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response { (status, body) }
}

/// The pushes of a batch still waiting for APNs; at the batch's deadline they are cancelled.
/// Used only on the connection's event loop.
final class UnansweredPushes: @unchecked Sendable {
    private let loop: any EventLoop
    private var tasks: [HTTPClient.Task<AnswerDelegate.Response>] = []
    private var waiting = 0
    private var timer: Scheduled<Void>?

    init(loop: any EventLoop) { self.loop = loop }

    func add(_ task: HTTPClient.Task<AnswerDelegate.Response>) {
        tasks.append(task)
        waiting += 1
    }

    /// One was answered; the last one ends the timer.
    func remove() {
        waiting -= 1
        if waiting == 0 {
            timer?.cancel()
            tasks = []
        }
    }

    func cancel(at deadline: NIODeadline) {
        guard waiting > 0 else { return }
        timer = loop.scheduleTask(deadline: deadline) {
            for task in self.tasks { task.cancel() }
        }
    }
}
