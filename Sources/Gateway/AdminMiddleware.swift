import Hummingbird

/// Lets a request through to the operators' routes (`/v1/admin/…`) only with the bearer
/// `SNIFFMEET_ADMIN_TOKEN`, compared in constant time; a user's token, any other token or none
/// is `401 unauthorized` and spends the address's budget. Without an admin token configured
/// the routes are closed.
struct AdminMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let adminToken: String?
    let limiter: RateLimiter
    let trustForwardedFor: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let expected = adminToken, let offered = Authenticator.bearerToken(request),
            SessionStore.constantTimeEqual(Array(SessionStore.hash(offered).utf8), Array(SessionStore.hash(expected).utf8))
        else {
            try limiter.spend(.ip(request.clientAddress(context, trustForwardedFor: trustForwardedFor)))
            throw APIError.unauthorized
        }
        var context = context
        context.isOperator = true
        return try await next(request, context)
    }
}
