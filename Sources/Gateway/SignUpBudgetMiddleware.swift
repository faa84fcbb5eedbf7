import Hummingbird

/// Sign-ups have a budget of their own per address, beyond that of anonymous requests; it is
/// spent before the body is read or an `Idempotency-Key` looked up, so a limited sign-up costs
/// nothing and its `429` is never stored as the key's answer.
///
/// With `nicknames`, it spends the nickname checks' budget instead (`GET /v1/nicknames/…`).
struct SignUpBudgetMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let limiter: RateLimiter
    let trustForwardedFor: Bool
    var nicknames = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let address = request.clientAddress(context, trustForwardedFor: trustForwardedFor)
        try limiter.spend(nicknames ? .nickname(address) : .signUp(address))
        return try await next(request, context)
    }
}
