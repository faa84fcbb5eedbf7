@preconcurrency import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A local stand-in for Apple's push service (`api.push.apple.com`), for the tests and `bench
/// push`: HTTP/2 over TLS on loopback, one request per stream as APNs takes them
/// (`POST /3/device/<token>`). It checks what APNs checks: the provider token (an ES256 JWT,
/// verified against the public key, its `kid`, `iss` and age), `apns-topic`, `apns-push-type`,
/// `apns-priority`, `apns-collapse-id`, `apns-expiration` and the 4 KiB payload limit, and answers
/// with APNs' statuses and `{"reason": …}` bodies, or as a test scripts it (`script`,
/// `answerAlways`, `expireCurrentProviderToken`).
public final class APNsDouble: Sendable {
    /// What the pushes must carry.
    public struct Expectations: Sendable {
        public var topic: String
        public var keyID: String
        public var teamID: String
        public var publicKey: P256.Signing.PublicKey

        public init(topic: String, keyID: String, teamID: String, publicKey: P256.Signing.PublicKey) {
            self.topic = topic
            self.keyID = keyID
            self.teamID = teamID
            self.publicKey = publicKey
        }
    }

    /// One push the double accepted (answered 200).
    public struct Delivery: Sendable {
        public var deviceToken: String
        /// Every request header, lowercased names.
        public var headers: [String: String]
        public var body: Data
        public var receivedAt: Date

        /// The body as JSON.
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    /// An answer APNs gives.
    public enum Answer: Sendable, Equatable {
        case ok
        case badDeviceToken
        case unregistered
        case tooManyRequests
        case serviceUnavailable
        case internalServerError
        case expiredProviderToken

        var status: HTTPResponseStatus {
            switch self {
            case .ok: .ok
            case .badDeviceToken: .badRequest
            case .unregistered: .gone
            case .tooManyRequests: .tooManyRequests
            case .serviceUnavailable: .serviceUnavailable
            case .internalServerError: .internalServerError
            case .expiredProviderToken: .forbidden
            }
        }

        var reason: String {
            switch self {
            case .ok: ""
            case .badDeviceToken: "BadDeviceToken"
            case .unregistered: "Unregistered"
            case .tooManyRequests: "TooManyRequests"
            case .serviceUnavailable: "ServiceUnavailable"
            case .internalServerError: "InternalServerError"
            case .expiredProviderToken: "ExpiredProviderToken"
            }
        }
    }

    struct State {
        var deliveries: [Delivery] = []
        /// Answers still to give per device token, in order; then `always`, then 200.
        var scripted: [String: [Answer]] = [:]
        var always: [String: Answer] = [:]
        /// Provider tokens answered `ExpiredProviderToken` from now on.
        var expiredJWTs: Set<String> = []
        var expireNextJWT = false
        /// Every answer given, by status code, and every refusal's reason.
        var statuses: [Int: Int] = [:]
        var refusals: [String] = []
        var jwtsSeen: Set<String> = []
        /// How long each answer takes.
        var answerDelay: TimeAmount = .zero
        /// Provider tokens whose signature checked out, with their `iat` (as APNs, it checks a
        /// token's signature once, not on every push that carries it).
        var verifiedJWTs: [String: Double] = [:]
    }

    let expectations: Expectations
    let state = Mutex(State())
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// The port it listens on (127.0.0.1).
    public let port: Int

    /// Starts the double on an ephemeral loopback port, with the test certificate (`certificatePEM`,
    /// valid for `localhost` and `127.0.0.1`).
    public static func start(_ expectations: Expectations, threads: Int = 1) async throws -> APNsDouble {
        let certificate = try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let holder = Holder()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.addHandler(NIOSSLServerHandler(context: context)).flatMap {
                    // APNs allows many concurrent streams per connection.
                    channel.configureHTTP2Pipeline(
                        mode: .server,
                        initialLocalSettings: [
                            HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                            HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
                        ],
                        targetWindowSize: 1 << 20
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(), StreamHandler(double: holder.double),
                            ])
                        }
                    }.map { _ in }
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let double = APNsDouble(expectations: expectations, group: group, channel: channel, port: channel.localAddress!.port!)
        holder.double = double
        return double
    }

    private init(expectations: Expectations, group: MultiThreadedEventLoopGroup, channel: any Channel, port: Int) {
        self.expectations = expectations
        self.group = group
        self.channel = channel
        self.port = port
    }

    /// Stops listening and closes every connection.
    public func stop() async throws {
        try await channel.close()
        try await group.shutdownGracefully()
    }

    /// The base URL to configure (`SNIFFMEET_APNS_URL`).
    public var url: String { "https://127.0.0.1:\(port)" }

    // MARK: Scripting

    /// The next pushes to `deviceToken` get `answers`, in order; later ones what they would anyway.
    public func script(_ deviceToken: String, _ answers: [Answer]) {
        state.withLock { $0.scripted[deviceToken.lowercased(), default: []] += answers }
    }

    /// Every push to `deviceToken` gets `answer` (e.g. `.unregistered` for an app deleted from the phone).
    public func answerAlways(_ deviceToken: String, _ answer: Answer) {
        state.withLock { $0.always[deviceToken.lowercased()] = answer }
    }

    /// Every answer from now on leaves `delay` after its request arrived (a slow APNs: pushes
    /// stay in flight).
    public func answerAfter(_ delay: TimeAmount) {
        state.withLock { $0.answerDelay = delay }
    }

    /// The provider token of the next request is answered `403 ExpiredProviderToken`, and so is
    /// every later request that carries it: the server must make a new one.
    public func expireCurrentProviderToken() {
        state.withLock { $0.expireNextJWT = true }
    }

    // MARK: What it saw

    /// The pushes answered 200, in arrival order.
    public var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    /// How many pushes were answered 200. (Cheaper to poll than `deliveries`: a copy of that
    /// array held while the double appends makes its next append copy all of it.)
    public var deliveryCount: Int { state.withLock { $0.deliveries.count } }
    /// How many answers of each status it gave.
    public var statuses: [Int: Int] { state.withLock { $0.statuses } }
    /// The reasons of the requests it refused.
    public var refusals: [String] { state.withLock { $0.refusals } }
    /// How many distinct provider tokens it was shown.
    public var providerTokenCount: Int { state.withLock { $0.jwtsSeen.count } }

    /// Forgets what it saw (not the scripts).
    public func reset() {
        state.withLock {
            $0.deliveries = []
            $0.statuses = [:]
            $0.refusals = []
        }
    }

    // MARK: Answering

    /// The status and `reason` for one request, after every check APNs makes.
    func answer(method: HTTPMethod, path: String, headers: HTTPHeaders, body: ByteBuffer) -> (HTTPResponseStatus, String?) {
        var fields: [String: String] = [:]
        for (name, value) in headers { fields[name.lowercased()] = value }
        let (status, reason) = check(method: method, path: path, fields: fields, body: body)
        state.withLock { state in
            state.statuses[Int(status.code), default: 0] += 1
            if let reason { state.refusals.append(reason) }
        }
        return (status, reason)
    }

    private func check(method: HTTPMethod, path: String, fields: [String: String], body: ByteBuffer) -> (HTTPResponseStatus, String?) {
        guard method == .POST else { return (.methodNotAllowed, "MethodNotAllowed") }
        let prefix = "/3/device/"
        guard path.hasPrefix(prefix) else { return (.notFound, "BadPath") }
        let token = String(path.dropFirst(prefix.count))
        guard (64...200).contains(token.count), token.allSatisfy(\.isHexDigit) else { return (.badRequest, "BadDeviceToken") }
        // The provider token.
        guard let authorization = fields["authorization"], authorization.lowercased().hasPrefix("bearer ") else {
            return (.forbidden, "MissingProviderToken")
        }
        let jwt = String(authorization.dropFirst("bearer ".count))
        switch verify(jwt) {
        case .valid: break
        case .expired: return (.forbidden, "ExpiredProviderToken")
        case .invalid: return (.forbidden, "InvalidProviderToken")
        }
        let expired = state.withLock { state -> Bool in
            state.jwtsSeen.insert(jwt)
            if state.expireNextJWT {
                state.expireNextJWT = false
                state.expiredJWTs.insert(jwt)
            }
            return state.expiredJWTs.contains(jwt)
        }
        if expired { return (.forbidden, "ExpiredProviderToken") }
        // The headers.
        guard let topic = fields["apns-topic"] else { return (.badRequest, "MissingTopic") }
        guard topic == expectations.topic else { return (.badRequest, "TopicDisallowed") }
        guard fields["apns-push-type"] == "alert" else { return (.badRequest, "InvalidPushType") }
        if let priority = fields["apns-priority"], !["5", "10"].contains(priority) { return (.badRequest, "BadPriority") }
        if let collapse = fields["apns-collapse-id"], collapse.utf8.count > 64 { return (.badRequest, "BadCollapseId") }
        if let expiration = fields["apns-expiration"], UInt64(expiration) == nil { return (.badRequest, "BadExpirationDate") }
        // The payload.
        guard body.readableBytes <= 4096 else { return (.payloadTooLarge, "PayloadTooLarge") }
        guard body.readableBytes > 0, let json = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            json["aps"] is [String: Any]
        else { return (.badRequest, "PayloadEmpty") }
        // The device.
        let scripted = state.withLock { state -> Answer in
            let key = token.lowercased()
            if var queue = state.scripted[key], !queue.isEmpty {
                let next = queue.removeFirst()
                state.scripted[key] = queue
                return next
            }
            return state.always[key] ?? .ok
        }
        guard scripted == .ok else { return (scripted.status, scripted.reason) }
        let delivery = Delivery(deviceToken: token.lowercased(), headers: fields, body: Data(body.readableBytesView), receivedAt: Date())
        state.withLock { $0.deliveries.append(delivery) }
        return (.ok, nil)
    }

    enum Verdict { case valid, expired, invalid }

    /// An ES256 JWT signed by the expected key, with the expected `kid` and `iss`, at most an hour old.
    func verify(_ jwt: String) -> Verdict {
        if let issuedAt = state.withLock({ $0.verifiedJWTs[jwt] }) { return Self.verdict(issuedAt: issuedAt) }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URL(parts[0]), let claimsData = Self.base64URL(parts[1]),
            let signatureData = Self.base64URL(parts[2]),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any],
            header["alg"] as? String == "ES256", header["kid"] as? String == expectations.keyID,
            claims["iss"] as? String == expectations.teamID, let issuedAt = (claims["iat"] as? NSNumber)?.doubleValue,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            expectations.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return .invalid }
        state.withLock { $0.verifiedJWTs[jwt] = issuedAt }
        return Self.verdict(issuedAt: issuedAt)
    }

    /// A well-signed token's verdict by its age.
    static func verdict(issuedAt: Double) -> Verdict {
        let age = Date().timeIntervalSince1970 - issuedAt
        if age > 3600 { return .expired }
        return age < -60 ? .invalid : .valid
    }

    static func base64URL(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

/// Lets the channel initializer, made before the double exists, reach it.
private final class Holder: @unchecked Sendable {
    // Set once, before the first connection can arrive (the bootstrap has only just bound).
    var double: APNsDouble?
}

/// One HTTP/2 stream: one push.
private final class StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let holder: APNsDouble?
    var head: HTTPRequestHead?
    var body = ByteBuffer()

    init(double: APNsDouble?) { self.holder = double }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body(var part): body.writeBuffer(&part)
        case .end: respond(context)
        }
    }

    private func respond(_ context: ChannelHandlerContext) {
        guard let head, let double = holder else { return }
        let (status, reason) = double.answer(method: head.method, path: head.uri, headers: head.headers, body: body)
        var headers = HTTPHeaders()
        headers.add(name: "apns-id", value: UUID().uuidString)
        var payload: ByteBuffer?
        if let reason {
            var text = #"{"reason":"\#(reason)""#
            if status == .gone { text += #","timestamp":\#(Int(Date().timeIntervalSince1970 * 1000))"# }
            text += "}"
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: "\(text.utf8.count)")
            payload = context.channel.allocator.buffer(string: text)
        } else {
            headers.add(name: "content-length", value: "0")
        }
        let answer = HTTPResponseHead(version: .http2, status: status, headers: headers)
        let delay = double.state.withLock { $0.answerDelay }
        guard delay > .zero else { return write(answer, payload, context) }
        context.eventLoop.assumeIsolated().scheduleTask(in: delay) { self.write(answer, payload, context) }
    }

    private func write(_ head: HTTPResponseHead, _ payload: ByteBuffer?, _ context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let payload { context.write(wrapOutboundOut(.body(.byteBuffer(payload))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

extension APNsDouble {
    /// A self-signed P-256 certificate for `localhost` and `127.0.0.1`, valid until 2126: the
    /// double's TLS identity. Only ever trusted by a test's or benchmark's client
    /// (`SNIFFMEET_APNS_CA_FILE`); never a secret.
    public static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBmzCCAUGgAwIBAgIUDh2VJZtd5mI86+mKJo6iIlFcBQowCgYIKoZIzj0EAwIw
        FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyNDE5MzUxNloYDzIxMjYxMDMx
        MTkzNTE2WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
        PQMBBwNCAAROteqLw2CPLQUtnuMPp6LZg7psRPzr6XQkTP/IIsnUGGPf7SmPOXvp
        uML+GL/zZpfirpvTQB2GyAcCR0nyE5hVo28wbTAdBgNVHQ4EFgQUNJL/d0wYTURg
        kz2xk5epDu1yMTEwHwYDVR0jBBgwFoAUNJL/d0wYTURgkz2xk5epDu1yMTEwDwYD
        VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
        zj0EAwIDSAAwRQIgUiyVt1dLerTvJoandNHGN1tVfK6ulTv9/qPEr4a5s8MCIQDL
        WFB6QMuHWDS1FljBInyHMuA+ybeX86POFHIV4xn11g==
        -----END CERTIFICATE-----

        """

    /// The certificate's private key (test identity of the double only).
    static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgbTrU9DPpRzKv3k4/
        sOVxf+QspKfNx0HQ4u+t3TNDjtqhRANCAAROteqLw2CPLQUtnuMPp6LZg7psRPzr
        6XQkTP/IIsnUGGPf7SmPOXvpuML+GL/zZpfirpvTQB2GyAcCR0nyE5hV
        -----END PRIVATE KEY-----

        """
}
