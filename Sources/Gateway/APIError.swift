import Foundation
import HTTPTypes
import Hummingbird

/// Every error a client can see: an HTTP status plus a stable `code` (API.md), a human message
/// and, for validation errors, the offending `field`.
///
/// Handlers throw these; `ErrorMiddleware` turns anything else into one of them, so that the
/// body is always `{"error": {"code", "message", "field"?}}`.
public struct APIError: Error, Sendable, Equatable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var field: String?
    /// Extra headers (`Retry-After`, `Allow`).
    public var headers: [String: String]

    public init(
        _ status: HTTPResponse.Status,
        _ code: String,
        _ message: String,
        field: String? = nil,
        headers: [String: String] = [:]
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers
    }

    public static func validation(_ field: String, _ message: String) -> APIError {
        APIError(.badRequest, "validation_failed", message, field: field)
    }
    public static let unauthorized = APIError(.unauthorized, "unauthorized", "A valid bearer token is required.")
    public static let forbidden = APIError(.forbidden, "forbidden", "You may not do this.")
    public static let notFound = APIError(.notFound, "not_found", "Not found.")
    public static func invalidJSON(_ message: String) -> APIError { APIError(.badRequest, "invalid_json", message) }
    public static func bodyTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, "body_too_large", "The request body is larger than \(limit) bytes.")
    }
    public static func methodNotAllowed(allowed: [String]) -> APIError {
        APIError(
            .methodNotAllowed,
            "method_not_allowed",
            "This route does not accept that method.",
            headers: ["Allow": allowed.joined(separator: ", ")]
        )
    }
    /// A value the database refused (out of its range, a character it cannot store) that no
    /// earlier check caught: still the request's fault, never a 500.
    public static let invalidValue = APIError(
        .badRequest,
        "validation_failed",
        "A value is out of range or holds characters that are not allowed."
    )
    public static let unavailable = APIError(
        .serviceUnavailable,
        "unavailable",
        "The database is not reachable or too slow; try again.",
        headers: ["Retry-After": "1"]
    )
    public static let overloaded = APIError(
        .serviceUnavailable,
        "overloaded",
        "Too many requests are waiting for the database; try again.",
        headers: ["Retry-After": "1"]
    )
    public static let notCaughtUp = APIError(
        .serviceUnavailable,
        "not_caught_up",
        "The read models have not reached Min-Log-Position yet; try again.",
        headers: ["Retry-After": "1"]
    )
    public static let requestTimeout = APIError(
        .serviceUnavailable,
        "request_timeout",
        "The request took too long; try again.",
        headers: ["Retry-After": "1"]
    )
    public static let idempotencyKeyReused = APIError(
        .unprocessableContent,
        "idempotency_key_reused",
        "This Idempotency-Key was used with a different request."
    )
    /// Past a client's budget (requests, open streams): `429` with the seconds to wait.
    public static func rateLimited(retryAfter seconds: Int, _ message: String = "Too many requests; slow down.") -> APIError {
        APIError(.tooManyRequests, "rate_limited", message, headers: ["Retry-After": String(max(1, seconds))])
    }
    /// A repeated sign-up (or session creation): its bearer token was shown once and never again.
    public static let accountSuspended = APIError(.forbidden, "account_suspended", "This account is suspended.")
    public static let alreadyRegistered = APIError(
        .conflict,
        "already_registered",
        "This request already succeeded; its token cannot be shown again."
    )
    /// A request head past `SNIFFMEET_MAX_HEADER_BYTES` or 100 fields (answered by `HeadTooLargeHandler`).
    public static let requestHeadTooLarge = APIError(
        .requestHeaderFieldsTooLarge,
        "request_header_fields_too_large",
        "The request head is too large or has too many fields."
    )
    public static let unexpected = APIError(.internalServerError, "internal_error", "Something went wrong on our side.")
}

extension APIError: HTTPResponseError {
    /// The JSON body of every error answer.
    struct Body: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
            var field: String?
        }
        var error: Detail
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bodyData)))
    }

    /// The JSON body alone, for answers written below the router.
    var bodyData: Data {
        (try? ResponseEncoder().encode(Body(error: .init(code: code, message: message, field: field)))) ?? Data()
    }
}
