import Hummingbird
import Postgres

/// Answers `503 request_timeout` when a request takes longer than the limit.
///
/// The request's deadline goes to every wait it meets as a task-local value
/// (`ConnectionPool.deadline`): work still waiting for a database connection at the deadline
/// fails, read-your-writes stops waiting (`ProjectionProgress`), and a statement already running
/// in PostgreSQL is bounded by the pool connections' `statement_timeout`. Whatever fails once the
/// deadline has passed is answered as the timeout; work that finishes after it keeps its answer.
/// The request runs in the connection's own task: a child task per request, to be cancelled at
/// the deadline (the connection's task must not be: that would close the connection unanswered),
/// was 5–8 % of a `GET /v1/me/mates`'s server CPU. The SSE streams are exempt: they are meant to
/// stay open.
struct TimeoutMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let timeout: Duration
    let exempt: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if exempt.contains(request.uri.path) { return try await next(request, context) }
        let deadline = ContinuousClock.now + timeout
        do {
            return try await ConnectionPool.$deadline.withValue(deadline) { try await next(request, context) }
        } catch {
            if ContinuousClock.now >= deadline { throw APIError.requestTimeout }
            throw error
        }
    }
}
