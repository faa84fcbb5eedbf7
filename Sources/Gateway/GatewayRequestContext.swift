import Commands
import Foundation
import Hummingbird
import Logging
import NIOCore

/// The per-request context: Hummingbird's core storage plus what the middleware in front of a
/// route found out: the caller (`AuthenticationMiddleware`) and the command's metadata
/// (`IdempotencyMiddleware`).
public struct GatewayRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection the request came on (its peer is the client, or the proxy before it).
    let channel: (any Channel)?
    /// The authenticated caller and their session; set by `AuthenticationMiddleware`.
    var identity: Caller?
    /// The command id and actor for this request; set by `IdempotencyMiddleware`.
    var commandMetadata: CommandMetadata?
    /// The request carries the operators' token; set by `AdminMiddleware`.
    var isOperator = false
    /// The operator asking: `admin` for the admin token, an operator's name for their API token
    /// (`AdminMiddleware`) or console session (`ConsoleMiddleware`).
    var operatorName: String?
    /// A console request's session and form (`ConsoleMiddleware`).
    var console: ConsoleRequest?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// The authenticated caller. Every route behind `AuthenticationMiddleware` has one; a route
    /// outside it has no caller, so `401 unauthorized`.
    var user: UUID {
        get throws { try caller.user }
    }

    /// The authenticated caller with the session their token opened.
    var caller: Caller {
        get throws {
            guard let identity else { throw APIError.unauthorized }
            return identity
        }
    }

    /// The metadata of the command this request runs. Only a route behind
    /// `IdempotencyMiddleware` has it; any other route asking is a wiring mistake.
    var command: CommandMetadata {
        get throws {
            guard let commandMetadata else { throw APIError.unexpected }
            return commandMetadata
        }
    }

    /// The TCP peer's address (nil in router tests, which have no socket).
    public var remoteAddress: SocketAddress? { channel?.remoteAddress }

    /// Bodies are read by `BodyReader` with the gateway's own limit; this only bounds
    /// Hummingbird's own decoding helpers, which the gateway does not use.
    public var maxUploadSize: Int { 16 * 1024 }
}
