import Foundation
import Hummingbird

/// Reads `Authorization: Bearer <token>` and finds the caller; anything else is `401 unauthorized`.
struct Authenticator: Sendable {
    let tokens: TokenStore

    /// The caller's user id.
    func requireUser(_ request: Request) async throws -> UUID {
        guard let token = Self.bearerToken(request), let user = try await tokens.user(for: token) else {
            throw APIError.unauthorized
        }
        return user
    }

    /// The token of an `Authorization: Bearer` header (scheme case-insensitive), if any.
    static func bearerToken(_ request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
