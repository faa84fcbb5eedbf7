import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The SniffMeet API's client for the app: the generated ``Client`` with the middlewares of this
/// library in the right order.
///
/// ```swift
/// let state = SniffMeetClient.State()
/// let client = SniffMeetClient.make(
///     serverURL: URL(string: "https://api.sniffmeet.example")!,
///     transport: URLSessionTransport(),
///     state: state
/// )
/// let answer = try await client.signUp(body: .json(.init(nickname: "bori", ...)))
/// state.token = try answer.created.body.json.token
/// ```
public enum SniffMeetClient {
    /// What the generated code needs to read the server's answers: times with milliseconds
    /// (`2026-11-25T14:03:07.123Z`), which the runtime's default transcoder does not take.
    public static let runtimeConfiguration = OpenAPIRuntime.Configuration(dateTranscoder: .iso8601WithFractionalSeconds)

    /// How the client behaves; the defaults suit the app.
    public struct Configuration: Sendable {
        /// The generated code's configuration (the date transcoder above by default).
        public var runtime: OpenAPIRuntime.Configuration
        /// How often a request answered `429` or `503` is tried again, and the longest wait.
        public var retry: RetryAfterMiddleware.Policy
        /// Whether queries carry the last `Log-Position` seen as `Min-Log-Position`.
        public var readYourWrites: Bool

        public init(
            runtime: OpenAPIRuntime.Configuration = SniffMeetClient.runtimeConfiguration,
            retry: RetryAfterMiddleware.Policy = .init(),
            readYourWrites: Bool = true
        ) {
            self.runtime = runtime
            self.retry = retry
            self.readYourWrites = readYourWrites
        }
    }

    /// What the middlewares of one app share: the bearer token and the last log position seen.
    /// Safe to use from any task.
    public final class State: @unchecked Sendable {
        private let lock = NSLock()
        private var _token: String?
        private var _logPosition: LogPosition?

        public init(token: String? = nil) { self._token = token }

        /// The bearer token sent with every request (nil: none, as before sign-up).
        public var token: String? {
            get { lock.withLock { _token } }
            set { lock.withLock { _token = newValue } }
        }

        /// The newest `Log-Position` an answer carried; queries wait for it (`Min-Log-Position`).
        public var logPosition: LogPosition? { lock.withLock { _logPosition } }

        /// Keeps `position` if it is newer than the one kept.
        public func observe(_ position: LogPosition) {
            lock.withLock { if _logPosition.map({ $0 < position }) ?? true { _logPosition = position } }
        }
    }

    /// The middlewares in order: the Idempotency-Key is chosen once per command, outside the
    /// retries, so that every retry carries the same key; the log position and token are read
    /// again on each try.
    public static func middlewares(state: State, configuration: Configuration = .init()) -> [any ClientMiddleware] {
        var middlewares: [any ClientMiddleware] = [IdempotencyKeyMiddleware(), RetryAfterMiddleware(configuration.retry)]
        if configuration.readYourWrites { middlewares.append(ReadYourWritesMiddleware(state: state)) }
        middlewares.append(BearerTokenMiddleware(state: state))
        return middlewares
    }

    /// A generated ``Client`` for `serverURL` over `transport`, with the middlewares.
    public static func make(
        serverURL: URL,
        transport: any ClientTransport,
        state: State,
        configuration: Configuration = .init()
    ) -> Client {
        Client(
            serverURL: serverURL,
            configuration: configuration.runtime,
            transport: transport,
            middlewares: middlewares(state: state, configuration: configuration)
        )
    }

    /// A JSON decoder for event data that reads times as the generated code does.
    static func decoder(_ configuration: OpenAPIRuntime.Configuration = runtimeConfiguration) -> JSONDecoder {
        let decoder = JSONDecoder()
        let transcoder = configuration.dateTranscoder
        decoder.dateDecodingStrategy = .custom { decoder in
            try transcoder.decode(try decoder.singleValueContainer().decode(String.self))
        }
        return decoder
    }
}

/// A `Log-Position` (`"<txid>.<seq>"`): opaque to the app, but ordered, so the client keeps the newest.
public struct LogPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The text as the server wrote it.
    public let description: String
    private let parts: (UInt64, UInt64)

    /// Nil for text that is no log position.
    public init?(_ text: String) {
        let halves = text.split(separator: ".", omittingEmptySubsequences: false)
        guard halves.count == 2, let high = UInt64(halves[0]), let low = UInt64(halves[1]) else { return nil }
        self.description = text
        self.parts = (high, low)
    }

    public static func < (a: LogPosition, b: LogPosition) -> Bool { a.parts < b.parts }
    public static func == (a: LogPosition, b: LogPosition) -> Bool { a.parts == b.parts }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(parts.0)
        hasher.combine(parts.1)
    }
}

extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let logPosition = HTTPField.Name("Log-Position")!
    static let minLogPosition = HTTPField.Name("Min-Log-Position")!
    static let retryAfter = HTTPField.Name("Retry-After")!
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}

/// The one shape of every error answer: `{"error": {"code", "message", "field"?}}`.
public typealias SniffMeetError = Components.Schemas._Error
