import Hummingbird

/// Anonymous requests spend their address's budget here; signed-in ones spend their user's
/// once the token is checked (`AuthenticationMiddleware`). Health, readiness and metrics are
/// exempt: load balancers and scrapers poll them from few addresses.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let limiter: RateLimiter
    let trustForwardedFor: Bool
    static let exempt: Set<String> = ["/healthz", "/readyz", "/metrics"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if !request.headers.contains(.authorization), !Self.exempt.contains(request.uri.path) {
            try limiter.spend(.ip(request.clientAddress(context, trustForwardedFor: trustForwardedFor)))
        }
        return try await next(request, context)
    }
}
