import Foundation

/// The OpenAPI 3.1 document of API.md, shipped as a resource and served at `/openapi.json`.
public enum OpenAPIDocument {
    /// The document's bytes.
    public static func data() throws -> Data {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json") else {
            throw APIError(.internalServerError, "internal_error", "The OpenAPI document is missing from the build.")
        }
        return try Data(contentsOf: url)
    }

    /// Every (method, path) the document describes, e.g. ("GET", "/v1/me").
    public static func operations() throws -> [RouteTable.Route] {
        guard let root = try JSONSerialization.jsonObject(with: data()) as? [String: Any],
              let paths = root["paths"] as? [String: Any] else { return [] }
        let methods = ["get", "put", "post", "delete", "patch", "head", "options"]
        return paths.flatMap { path, item -> [RouteTable.Route] in
            guard let item = item as? [String: Any] else { return [] }
            return item.keys.filter(methods.contains).map { RouteTable.Route(method: $0.uppercased(), path: path) }
        }.sorted()
    }
}
