import Hummingbird
import Synchronization

/// The methods the router serves at a request path, read from Hummingbird's `Router.routes`.
///
/// Hummingbird answers a known path with an unknown method as "not found"; API.md wants `405`
/// with `Allow` there, so `ErrorMiddleware` asks this. Middleware is built before the routes it
/// wraps, hence a reference that `buildRouter` fills once every route is added.
final class AllowedMethods: Sendable {
    private let routes = Mutex<[(path: RouterPath, method: String)]>([])

    /// Takes the router's routes; call after the last route is added.
    func load(from router: Router<some RequestContext>) {
        let routes = router.routes.map { (path: $0.path, method: $0.method.rawValue) }
        self.routes.withLock { $0 = routes }
    }

    /// The methods served at a concrete request path, sorted (empty when no route matches).
    func methods(matching requestPath: String) -> [String] {
        let segments = requestPath.split(separator: "/", omittingEmptySubsequences: true)
        return routes.withLock { routes in
            routes.filter { route in
                route.path.components.count == segments.count
                    && zip(route.path.components, segments).allSatisfy { element, segment in element ~= segment }
            }.map(\.method)
        }.sorted()
    }
}
