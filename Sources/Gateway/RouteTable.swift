import Foundation
import Hummingbird
import Synchronization

/// The routes the router serves, as (method, path template) pairs.
///
/// Kept for two reasons: Hummingbird answers a known path with an unknown method as "not
/// found", and API.md wants `405` there; and the OpenAPI drift test compares this table with the
/// document.
public final class RouteTable: Sendable {
    public struct Route: Hashable, Sendable, Comparable {
        public var method: String
        /// Path with `{name}` parameters, as in OpenAPI.
        public var path: String
        public static func < (a: Route, b: Route) -> Bool { (a.path, a.method) < (b.path, b.method) }
    }

    private let storage = Mutex<[Route]>([])

    public init() {}

    public var routes: [Route] { storage.withLock { $0 }.sorted() }

    func record(_ method: HTTPRequest.Method, _ path: String) {
        storage.withLock { $0.append(Route(method: method.rawValue, path: path)) }
    }

    /// The methods served at a concrete request path (empty when no template matches).
    public func methods(matching requestPath: String) -> [String] {
        let segments = requestPath.split(separator: "/", omittingEmptySubsequences: true)
        return routes.filter { route in
            let template = route.path.split(separator: "/", omittingEmptySubsequences: true)
            guard template.count == segments.count else { return false }
            return zip(template, segments).allSatisfy { t, s in t.hasPrefix("{") || t == s }
        }.map(\.method).sorted()
    }
}

extension Router {
    /// Adds a route and records it in `table`. `path` uses `{name}` parameters (OpenAPI style);
    /// they are turned into Hummingbird's `:name`.
    @discardableResult
    func route(_ table: RouteTable, _ method: HTTPRequest.Method, _ path: String,
               use handler: @escaping @Sendable (Request, Context) async throws -> Response) -> Self {
        table.record(method, path)
        let hummingbirdPath = path.split(separator: "/").map { segment -> String in
            segment.hasPrefix("{") ? ":" + segment.dropFirst().dropLast() : String(segment)
        }.joined(separator: "/")
        return on(RouterPath(hummingbirdPath), method: method) { request, context in try await handler(request, context) }
    }
}
