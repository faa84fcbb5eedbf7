import Foundation
import Hummingbird
import Logging

/// The per-request context: Hummingbird's core storage plus our request id and, once the
/// bearer token was checked, the caller's user id.
public struct GatewayRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The request id echoed in `X-Request-Id` and put on every log line of the request.
    public var requestID: String = ""
    /// The authenticated caller; set by `Authenticator.requireUser`.
    public var userID: UUID?

    public init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// Bodies are read by `JSONBody` with the gateway's own limit; this only bounds Hummingbird's
    /// own decoding helpers, which the gateway does not use.
    public var maxUploadSize: Int { 16 * 1024 }
}
