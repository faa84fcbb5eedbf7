import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
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
public final class APNsClient: Sendable {
    let settings: APNsSettings
    let token: ProviderToken
    private let http: HTTPClient

    public init(settings: APNsSettings) throws {
        self.settings = settings
        self.token = try ProviderToken(settings: settings)
        var tls = TLSConfiguration.makeClientConfiguration()
        if let ca = settings.caFile { tls.additionalTrustRoots = [.file(ca)] }
        // No read timeout: every push is sent with a deadline, which ends it; a read timeout only
        // added timers to the connection's event loop, two per push.
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: .seconds(10), read: nil))
        configuration.httpVersion = .automatic
        // No spans: unused here, and making them parsed every push's URL once more.
        configuration.tracing.tracer = nil
        // The only hook async-http-client gives into a request's stream pipeline (named "debug",
        // but a supported configuration): the three flushes of each push become one.
        configuration.http2StreamChannelDebugInitializer = { FlushCoalescingHandler.install(on: $0) }
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the connection.
    public func shutdown() async throws { try await http.shutdown() }

    /// Sends one push; never throws (every failure is an outcome). A push still unanswered at
    /// `deadline` is given up as a timeout, so that its claim's lease is not outlived.
    public func send(_ push: OutgoingPush, deadline: NIODeadline = .now() + .seconds(30)) async -> APNsOutcome {
        let jwt: String
        do { jwt = try token.jwt() } catch { return .retry(reason: "provider token: \(error)") }
        var request = HTTPClientRequest(url: "\(settings.baseURL)/3/device/\(push.deviceToken)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(jwt)")
        request.headers.add(name: "apns-topic", value: settings.topic)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-priority", value: "10")
        request.headers.add(name: "apns-collapse-id", value: push.notificationID.uuidString.lowercased())
        let expiry = push.expiresAt ?? push.entryAt.addingTimeInterval(settings.horizon)
        request.headers.add(name: "apns-expiration", value: String(max(0, Int(expiry.timeIntervalSince1970))))
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: PushPayload.data(for: push)))
        do {
            let response = try await http.execute(request, deadline: deadline)
            let body = try await response.body.collect(upTo: 64 * 1024)
            let outcome = Self.outcome(status: Int(response.status.code), body: Data(body.readableBytesView))
            if outcome == .expiredProviderToken { token.renew(rejected: jwt) }
            return outcome
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return .retry(reason: "timeout")
        } catch {
            return .retry(reason: "transport")
        }
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
