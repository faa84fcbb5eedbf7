import Foundation
import Hummingbird
import UUIDText

extension GatewayRequestContext {
    /// A path parameter that must be a UUID; anything else cannot name a thing, so `404`.
    func uuidParameter(_ name: String) throws -> UUID {
        guard let text = parameters.get(name), let id = UUID(text: text) else { throw APIError.notFound }
        return id
    }
}

extension Request {
    /// An optional enumerated query parameter; a value outside `allowed` is `400 validation_failed`.
    func queryValue(_ name: String, allowed: [String]) throws -> String? {
        guard let value = uri.queryParameters[Substring(name)].map(String.init), !value.isEmpty else { return nil }
        guard allowed.contains(value) else {
            throw APIError.validation(name, "\(name) must be one of \(allowed.joined(separator: ", "))")
        }
        return value
    }
}
