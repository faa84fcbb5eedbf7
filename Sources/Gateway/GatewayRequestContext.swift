import Foundation
import Hummingbird
import Logging
import NIOCore

/// The per-request context: Hummingbird's core storage plus our request id and, once the
/// bearer token was checked, the caller's user id.
public struct GatewayRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection the request came on (its peer is the client, or the proxy before it).
    let channel: (any Channel)?
    /// The authenticated caller; set by `Authenticator.requireUser`.
    public var userID: UUID?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// The TCP peer's address (nil in router tests, which have no socket).
    public var remoteAddress: SocketAddress? { channel?.remoteAddress }

    /// Bodies are read by `JSONBody` with the gateway's own limit; this only bounds Hummingbird's
    /// own decoding helpers, which the gateway does not use.
    public var maxUploadSize: Int { 16 * 1024 }
}
