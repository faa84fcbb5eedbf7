import Hummingbird

/// Sign-ups have a budget of their own per address, beyond that of anonymous requests; it is
/// spent before the body is read or an `Idempotency-Key` looked up, so a limited sign-up costs
/// nothing and its `429` is never stored as the key's answer.
struct SignUpBudgetMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let limiter: RateLimiter
    let trustForwardedFor: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try limiter.spend(.signUp(request.clientAddress(context, trustForwardedFor: trustForwardedFor)))
        return try await next(request, context)
    }
}
