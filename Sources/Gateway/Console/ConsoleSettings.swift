import Foundation

/// The operator console's settings.
public struct ConsoleSettings: Sendable {
    /// Where operators reach the server (`SNIFFMEET_PUBLIC_URL`): the base of password links, and
    /// an origin console forms may come from. Default `http://127.0.0.1:8080`.
    public var publicURL: String
    /// Cookies marked `Secure` (`SNIFFMEET_CONSOLE_SECURE_COOKIES`): by default when the public
    /// URL is https, or a trusted proxy (`SNIFFMEET_TRUST_FORWARDED_FOR`) says
    /// `X-Forwarded-Proto: https`.
    public var secureCookies: Bool?
    /// Failed sign-ins allowed per name and per address before waiting.
    public var signInBurst: Double
    /// Failed sign-ins given back per second.
    public var signInRefillPerSecond: Double

    public init(
        publicURL: String = ConsoleSettings.defaultPublicURL,
        secureCookies: Bool? = nil,
        signInBurst: Double = 5,
        signInRefillPerSecond: Double = 1.0 / 60
    ) {
        self.publicURL = publicURL
        self.secureCookies = secureCookies
        self.signInBurst = signInBurst
        self.signInRefillPerSecond = signInRefillPerSecond
    }

    public static let defaultPublicURL = "http://127.0.0.1:8080"

    /// The public URL's origin (`scheme://host[:port]`), lowercased.
    public var publicOrigin: String? {
        guard let url = URL(string: publicURL), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        return url.port.map { "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)"
    }

    /// The link that sets a password.
    public func passwordLink(_ secret: String) -> String {
        var base = publicURL
        while base.hasSuffix("/") { base.removeLast() }
        return "\(base)/console/set-password?link=\(secret)"
    }

    /// These settings with `SNIFFMEET_PUBLIC_URL` and `SNIFFMEET_CONSOLE_SECURE_COOKIES` applied.
    public func applyingEnvironment(_ environment: [String: String]) -> Self {
        var copy = self
        if let url = environment["SNIFFMEET_PUBLIC_URL"], !url.isEmpty { copy.publicURL = url }
        if let flag = environment["SNIFFMEET_CONSOLE_SECURE_COOKIES"], !flag.isEmpty {
            copy.secureCookies = ["1", "true", "yes"].contains(flag)
        }
        return copy
    }
}
