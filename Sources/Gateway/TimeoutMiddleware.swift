import Hummingbird

/// Answers `503 request_timeout` when a request takes longer than the limit.
///
/// The route's work runs in a child task, which `RequestDeadlines` cancels at the deadline (the
/// connection's own task must not be cancelled: that would close the connection unanswered).
/// What waits in Swift (pool queue, read-your-writes) stops at once, and a statement already
/// running in PostgreSQL is bounded by the pool connections' `statement_timeout`. The SSE
/// stream is exempt: it is meant to stay open.
struct TimeoutMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let timeout: Duration
    let exempt: Set<String>
    let deadlines = RequestDeadlines()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if exempt.contains(request.uri.path) { return try await next(request, context) }
        return try await withoutActuallyEscaping(next) { next in
            // Sound: `async let` does not leave this scope before its child has finished.
            nonisolated(unsafe) let next = next
            nonisolated(unsafe) let request = request
            let timeout = self.timeout
            let deadlines = self.deadlines
            // `async let`'s child is allocated in this task's own allocator: a task group's
            // child costs a heap allocation and a group besides.
            async let response = deadlines.run(timeout: timeout, timedOut: APIError.requestTimeout) {
                try await next(request, context)
            }
            return try await response
        }
    }
}
