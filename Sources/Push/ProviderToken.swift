@preconcurrency import Crypto
import Foundation
import Synchronization

/// The provider token APNs takes instead of a client certificate: a JWT `{"alg":"ES256","kid"}`
/// `{"iss","iat"}` signed with the `.p8` key. Apple refuses one older than an hour and one
/// renewed more often than every 20 minutes, so it is made once and renewed after 40 minutes,
/// or at once when APNs answers `ExpiredProviderToken` for it.
public final class ProviderToken: Sendable {
    /// Renewed after this age.
    static let renewAfter: TimeInterval = 40 * 60

    private let key: P256.Signing.PrivateKey
    private let header: String
    private let teamID: String
    private let current = Mutex<(jwt: String, issuedAt: Date)?>(nil)

    public init(settings: APNsSettings) throws {
        do { key = try P256.Signing.PrivateKey(pemRepresentation: settings.keyPEM) } catch {
            throw APNsSettings.Invalid(description: "the APNs key is not a P-256 private key in PEM (.p8): \(error)")
        }
        header = Self.base64URL(Data(#"{"alg":"ES256","kid":"\#(settings.keyID)"}"#.utf8))
        teamID = settings.teamID
    }

    /// The token to send now: the cached one, or a new one once it is 40 minutes old.
    public func jwt(now: Date = Date()) throws -> String {
        try current.withLock { current in
            if let current, now.timeIntervalSince(current.issuedAt) < Self.renewAfter { return current.jwt }
            let made = try make(at: now)
            current = (made, now)
            return made
        }
    }

    /// APNs called `rejected` expired: the next `jwt()` makes a new one (unless already done).
    public func renew(rejected: String) {
        current.withLock { current in
            if current?.jwt == rejected { current = nil }
        }
    }

    private func make(at date: Date) throws -> String {
        let claims = Self.base64URL(Data(#"{"iat":\#(Int(date.timeIntervalSince1970)),"iss":"\#(teamID)"}"#.utf8))
        let input = "\(header).\(claims)"
        let signature = try key.signature(for: Data(input.utf8))
        return "\(input).\(Self.base64URL(signature.rawRepresentation))"
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
