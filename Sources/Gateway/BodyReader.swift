import Foundation
import Hummingbird
import JSONText

/// Reads request bodies with the gateway's size limit and decodes JSON with API error codes:
/// malformed JSON is `invalid_json`, a missing or mistyped field `validation_failed` naming it.
struct BodyReader: Sendable {
    let limit: Int

    /// The raw body; `413 body_too_large` past the limit (checked on Content-Length first,
    /// so an honest oversized upload is refused without reading it). Afterwards `request`
    /// holds the body as one buffer, so reading it again (the route after
    /// `IdempotencyMiddleware`) costs nothing.
    func bytes(_ request: inout Request) async throws -> Data {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError.bodyTooLarge(limit: limit)
        }
        do {
            let buffer = try await request.collectBody(upTo: limit)
            return Data(buffer.readableBytesView)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.bodyTooLarge(limit: limit)
        }
    }

    /// The body decoded as `T`.
    func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        var request = request
        return try Self.decode(T.self, from: try await bytes(&request))
    }

    /// Shared: its options never change, and one per request was measurable.
    private static let decoder = JSONDecoder()

    /// Decodes `data` as `T`: the hot commands' plain bodies the quick way (`FlatDecodable`),
    /// everything else, and every error, through `JSONDecoder`.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard !data.isEmpty else { throw APIError.invalidJSON("A JSON body is required.") }
        if let quick = T.self as? any FlatDecodable.Type, let object = FlatJSONObject(data), let body = quick.init(flat: object) as? T {
            return body
        }
        do {
            return try decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            throw apiError(error)
        }
    }

    static func apiError(_ error: DecodingError) -> APIError {
        func field(_ path: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let keys = (path + (key.map { [$0] } ?? [])).filter { $0.intValue == nil }.map(\.stringValue)
            return keys.last ?? "body"
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return .invalidJSON("The body is not valid JSON.")
        case .dataCorrupted(let context):
            return .validation(field(context.codingPath), "\(field(context.codingPath)) has a value that is not allowed")
        case .keyNotFound(let key, let context):
            return .validation(field(context.codingPath, key), "\(field(context.codingPath, key)) is required")
        case .valueNotFound(_, let context):
            return .validation(field(context.codingPath), "\(field(context.codingPath)) must not be null")
        case .typeMismatch(_, let context):
            return .validation(field(context.codingPath), "\(field(context.codingPath)) has the wrong type")
        @unknown default:
            return .invalidJSON("The body could not be read.")
        }
    }
}
