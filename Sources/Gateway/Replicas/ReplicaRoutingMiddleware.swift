import Hummingbird
import Postgres
import ServiceLifecycle

/// Sends the read-model reads of `GET` requests to the replicas while they keep up
/// (`ReplicaReads`); everything else, and the exempt paths (the live inbox stream, whose backlog
/// and live feed must meet without a gap), reads on the primary.
struct ReplicaRoutingMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let replicas: ReplicaReads
    let primary: ConnectionPool
    let exempt: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get, replicas.isUsable, !exempt.contains(request.uri.path) else { return try await next(request, context) }
        return try await ReadChoice.$current.withValue(ReadChoice(replicas: replicas, primary: primary)) {
            try await next(request, context)
        }
    }
}

/// Keeps measuring the replicas' lag while the server runs; closes their pool at the end.
struct ReplicaMonitorService: Service {
    let replicas: ReplicaReads

    func run() async throws {
        await cancelWhenGracefulShutdown { await replicas.monitor() }
        await replicas.pool.close()
    }
}
