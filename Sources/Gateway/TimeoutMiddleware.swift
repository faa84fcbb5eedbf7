import Hummingbird

/// Answers `503 request_timeout` when a request takes longer than the limit.
///
/// The work is cancelled; what waits in Swift (pool queue, read-your-writes) stops at once, and
/// a statement already running in PostgreSQL is bounded by the pool connections'
/// `statement_timeout`. The SSE stream is exempt: it is meant to stay open.
struct TimeoutMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let timeout: Duration
    let exempt: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if exempt.contains(request.uri.path) { return try await next(request, context) }
        return try await withoutActuallyEscaping(next) { next in
            // Sound: the task group below does not return before both children have finished.
            nonisolated(unsafe) let next = next
            nonisolated(unsafe) let request = request
            let timeout = self.timeout
            return try await withThrowingTaskGroup(of: Response.self) { group in
                group.addTask { try await next(request, context) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw APIError.requestTimeout
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        }
    }
}
