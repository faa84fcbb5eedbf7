import Foundation

/// The OpenAPI 3.1 document of API.md, shipped as a resource and served at `/openapi.json`.
public enum OpenAPIDocument {
    /// One operation: a method and a path with `{name}` parameters, as OpenAPI (and
    /// Hummingbird's `RouterPath.description`) write them.
    public struct Operation: Hashable, Comparable, Sendable {
        /// Upper case, e.g. `GET`.
        public var method: String
        /// E.g. `/v1/walks/{id}`.
        public var path: String
        /// An operation of `method` at `path`.
        public init(method: String, path: String) {
            self.method = method
            self.path = path
        }
        public static func < (a: Operation, b: Operation) -> Bool { (a.path, a.method) < (b.path, b.method) }
    }

    /// Paths served as HTML pages for people in a browser (the operator console), not as the
    /// JSON API: the document does not describe them. Only whole path segments count, so
    /// `/consoles` or anything under `/v1` is never excluded.
    public static let htmlPrefixes = ["/console"]

    /// True when `path` belongs to the JSON API the document describes.
    public static func describes(_ path: String) -> Bool {
        !htmlPrefixes.contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    /// The document's bytes.
    public static func data() throws -> Data {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json") else {
            throw APIError(.internalServerError, "internal_error", "The OpenAPI document is missing from the build.")
        }
        return try Data(contentsOf: url)
    }

    /// Every (method, path) the document describes, e.g. ("GET", "/v1/me").
    public static func operations() throws -> [Operation] {
        guard let root = try JSONSerialization.jsonObject(with: data()) as? [String: Any],
            let paths = root["paths"] as? [String: Any]
        else { return [] }
        let methods = ["get", "put", "post", "delete", "patch", "head", "options"]
        return paths.flatMap { path, item -> [Operation] in
            guard let item = item as? [String: Any] else { return [] }
            return item.keys.filter(methods.contains).map { Operation(method: $0.uppercased(), path: path) }
        }.sorted()
    }
}
