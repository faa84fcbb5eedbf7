import Commands
import Domain
import Foundation
import Hummingbird
import Logging
import Postgres

/// Turns every error into the JSON error answer of API.md, so that nothing a client sends
/// becomes an unexplained 500: router misses become `404 not_found` or `405`, database outages
/// `503 unavailable`, domain refusals their stable code.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let allowedMethods: AllowedMethods
    let maxBodyBytes: Int
    /// Maps errors of modules the gateway does not know statically (the command handler's).
    let translate: @Sendable (any Error) -> APIError?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = map(error, request: request, context: context)
            // A bug is an error; an expected 503 (database away, overload, not caught up) a warning.
            // Log lines name the kind of failure and its SQLSTATE, never the values: a server
            // message can quote what the client sent.
            if apiError.code == APIError.unexpected.code {
                context.logger.error("request failed", metadata: ["error": "\(Self.logSummary(error))", "code": "\(apiError.code)"])
            } else if apiError.status.code >= 500 || error is PostgresError {
                context.logger.warning("request not served", metadata: ["error": "\(Self.logSummary(error))", "code": "\(apiError.code)"])
            }
            return try apiError.response(from: request, context: context)
        }
    }

    func map(_ error: any Error, request: Request, context: Context) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let refusal as CommandRefusal:
            return refusal.error
        case let error as DomainError:
            return error.apiError
        case let error as CommandError:
            return error.apiError
        case let error as HTTPError:
            switch error.status {
            case .notFound:
                let allowed = allowedMethods.methods(matching: request.uri.path)
                return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
            case .contentTooLarge:
                return .bodyTooLarge(limit: maxBodyBytes)
            default:
                return APIError(
                    error.status,
                    error.status.code < 500 ? "bad_request" : "internal_error",
                    error.body ?? error.status.reasonPhrase
                )
            }
        case let error as PostgresError:
            if case .poolTimeout = error { return .overloaded }
            if error.isTransient { return .unavailable }
            if error.isInvalidInput { return .invalidValue }
            return .unexpected
        case is CancellationError:
            return .requestTimeout
        default:
            return translate(error) ?? .unexpected
        }
    }

    /// What a log line may say about `error`: its type, and for database errors the SQLSTATE.
    static func logSummary(_ error: any Error) -> String {
        switch error {
        case let error as APIError: error.code
        case let refusal as CommandRefusal: refusal.error.code
        case let error as DomainError: error.apiError.code
        default: PostgresError.logSummary(of: error)
        }
    }
}
