import Hummingbird

/// Records every answer by route template (so ids in paths do not explode the label set).
/// It sits outside `ErrorMiddleware`, so error answers are counted with their real status.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let metrics: GatewayMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        metrics.recordRequest(
            method: request.method.rawValue,
            route: context.endpointPath ?? "unmatched",
            status: response.status.code,
            duration: ContinuousClock.now - start
        )
        return response
    }
}
