import Foundation

/// Bearer secrets handed to clients (auth tokens, drop tokens): 256 bits from the system's
/// secure generator, URL-safe base64 without padding (43 characters).
public enum SecretToken {
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
