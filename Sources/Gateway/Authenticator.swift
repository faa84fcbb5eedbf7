import Foundation
import Hummingbird

/// Reads `Authorization: Bearer <token>` and finds the caller; anything else is `401 unauthorized`.
/// `AuthenticationMiddleware` applies it to every signed-in route.
struct Authenticator: Sendable {
    let sessions: SessionStore
    let limiter: RateLimiter

    /// The caller (user and session); the request spends the user's budget. A request without
    /// a good token spends its address's budget, so guessing tokens is as slow as any anonymous flood.
    func requireCaller(_ request: Request, address: String) async throws -> Caller {
        guard let token = Self.bearerToken(request), let caller = try await sessions.caller(for: token) else {
            try limiter.spend(.ip(address))
            throw APIError.unauthorized
        }
        try limiter.spend(.user(caller.user))
        return caller
    }

    private static let scheme = Array("bearer".utf8)

    /// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), if any.
    ///
    /// Read on the header's bytes: this runs on every request, and splitting and trimming with
    /// Foundation cost about 2% of a GET's CPU.
    static func bearerToken(_ request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let bytes = Array(header.utf8)
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = bytes.startIndex
        while start < bytes.endIndex, isBlank(bytes[start]) { start += 1 }
        // "bearer" in any case: OR-ing 0x20 lowercases ASCII letters and maps nothing else onto one.
        let scheme = Self.scheme
        guard bytes.count - start > scheme.count + 1,
            zip(bytes[start...], scheme).allSatisfy({ $0 | 0x20 == $1 }),
            bytes[start + scheme.count] == UInt8(ascii: " ")
        else { return nil }
        var tokenStart = start + scheme.count
        var tokenEnd = bytes.endIndex
        while tokenStart < tokenEnd, isBlank(bytes[tokenStart]) { tokenStart += 1 }
        while tokenEnd > tokenStart, isBlank(bytes[tokenEnd - 1]) { tokenEnd -= 1 }
        return tokenStart < tokenEnd ? String(decoding: bytes[tokenStart..<tokenEnd], as: UTF8.self) : nil
    }
}
