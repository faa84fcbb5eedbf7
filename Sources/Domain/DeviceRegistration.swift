import Foundation

/// A phone's registration for push: its APNs device token and the language of its pushes.
/// Device tokens belong to sessions (one per phone), outside the log; this is their rule.
public struct DeviceRegistration: Sendable, Equatable {
    /// The languages pushes are written in.
    public enum Locale: String, Sendable, CaseIterable {
        case ko, en
    }

    /// Device tokens are hex strings of 64 to 200 characters (APNs tokens are 32 bytes today;
    /// Apple reserves the right to make them longer).
    public static let tokenLength = 64...200

    /// Lowercase hex, so that one device is one token whatever case the phone sent.
    public var token: String
    public var locale: Locale

    /// Checks `token` and `locale` (`ko` when absent).
    public init(token: String, locale: String?) throws(DomainError) {
        guard Self.tokenLength.contains(token.utf8.count), token.unicodeScalars.allSatisfy(\.isASCIIHexDigit) else {
            throw .validationFailed(field: "device_token", reason: "must be 64 to 200 hex digits")
        }
        guard let locale = Locale(rawValue: locale ?? Locale.ko.rawValue) else {
            throw .validationFailed(field: "locale", reason: "must be ko or en")
        }
        self.token = token.lowercased()
        self.locale = locale
    }
}
