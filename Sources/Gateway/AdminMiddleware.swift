import Domain
import Hummingbird

/// Lets a request through to the operators' routes (`/v1/admin/…`) only with the bearer
/// `SNIFFMEET_ADMIN_TOKEN` (compared in constant time; operator `admin`) or an operator's API
/// token (`sniffmeet operators token NAME`; that operator); a user's token, any other token or
/// none is `401 unauthorized` and spends the address's budget.
struct AdminMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let adminToken: String?
    let limiter: RateLimiter
    let trustForwardedFor: Bool
    /// The operator an API token belongs to, if any.
    var tokenOwner: @Sendable (String) async throws -> String? = { _ in nil }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let offered = Authenticator.bearerToken(request)
        var name: String?
        if let expected = adminToken, let offered,
            SessionStore.constantTimeEqual(Array(SessionStore.hash(offered).utf8), Array(SessionStore.hash(expected).utf8))
        {
            name = OperatorNames.admin
        } else if let offered {
            name = try await tokenOwner(offered)
        }
        guard let name else {
            try limiter.spend(.ip(request.clientAddress(context, trustForwardedFor: trustForwardedFor)))
            throw APIError.unauthorized
        }
        var context = context
        context.isOperator = true
        context.operatorName = name
        return try await next(request, context)
    }
}
