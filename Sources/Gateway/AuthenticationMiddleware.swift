import Hummingbird

/// Lets a request through to the signed-in routes only with a good bearer token, and puts its
/// user in the context (`context.user`); anything else is `401 unauthorized`.
///
/// The request spends the caller's budget, or, when the token is not good, its address's
/// (`Authenticator`).
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let authenticator: Authenticator
    let trustForwardedFor: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.identity = try await authenticator.requireCaller(
            request,
            address: request.clientAddress(context, trustForwardedFor: trustForwardedFor)
        )
        return try await next(request, context)
    }
}
