import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends the app's bearer token (``SniffMeetClient/State/token``) with every request that has none.
public struct BearerTokenMiddleware: ClientMiddleware {
    let state: SniffMeetClient.State

    public init(state: SniffMeetClient.State) { self.state = state }

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.headerFields[.authorization] == nil, let token = state.token {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}

/// Gives every command (any method but GET and HEAD) an `Idempotency-Key` unless the caller chose
/// one: placed before ``RetryAfterMiddleware``, every retry of the command carries the same key,
/// so the server runs it once. A caller that retries a command itself (after a lost answer)
/// passes the key it sent the first time.
public struct IdempotencyKeyMiddleware: ClientMiddleware {
    public init() {}

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.method != .get, request.method != .head, request.headerFields[.idempotencyKey] == nil {
            request.headerFields[.idempotencyKey] = UUID().uuidString.lowercased()
        }
        return try await next(request, body, baseURL)
    }
}

/// Read-your-writes: remembers the newest `Log-Position` any answer carried and sends it as
/// `Min-Log-Position` with the next query (GET), so that a list read after a command shows it.
public struct ReadYourWritesMiddleware: ClientMiddleware {
    let state: SniffMeetClient.State

    public init(state: SniffMeetClient.State) { self.state = state }

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.method == .get, request.headerFields[.minLogPosition] == nil, let position = state.logPosition {
            request.headerFields[.minLogPosition] = position.description
        }
        let (response, responseBody) = try await next(request, body, baseURL)
        if let text = response.headerFields[.logPosition], let position = LogPosition(text) { state.observe(position) }
        return (response, responseBody)
    }
}

/// Tries a request answered `429` or `503` again after its `Retry-After` (or a second without
/// one), a bounded number of times; the last answer goes to the caller as it came.
public struct RetryAfterMiddleware: ClientMiddleware {
    /// How many times, and how long at most.
    public struct Policy: Sendable {
        /// Retries after the first try (0: never).
        public var maxRetries: Int
        /// The longest wait honoured; a longer `Retry-After` is answered to the caller instead.
        public var maxDelay: TimeInterval
        /// Bodies up to this size are kept to send again (a photo is at most 10 MiB).
        public var maxBodyBytes: Int

        public init(maxRetries: Int = 3, maxDelay: TimeInterval = 30, maxBodyBytes: Int = 11 * 1024 * 1024) {
            self.maxRetries = maxRetries
            self.maxDelay = maxDelay
            self.maxBodyBytes = maxBodyBytes
        }
    }

    let policy: Policy

    public init(_ policy: Policy = .init()) { self.policy = policy }

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard policy.maxRetries > 0 else { return try await next(request, body, baseURL) }
        // A body can be read once: keep its bytes to send on each try.
        let bytes: [UInt8]? = if let body { try await [UInt8](collecting: body, upTo: policy.maxBodyBytes) } else { nil }
        var tries = 0
        while true {
            let (response, responseBody) = try await next(request, bytes.map { HTTPBody($0) }, baseURL)
            tries += 1
            guard response.status == .tooManyRequests || response.status == .serviceUnavailable, tries <= policy.maxRetries
            else { return (response, responseBody) }
            let delay = response.headerFields[.retryAfter].flatMap { TimeInterval($0) } ?? 1
            guard delay >= 0, delay <= policy.maxDelay else { return (response, responseBody) }
            // The refused answer's body is not needed: drain it so the connection can be reused.
            if let responseBody { _ = try? await [UInt8](collecting: responseBody, upTo: 64 * 1024) }
            try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
        }
    }
}
