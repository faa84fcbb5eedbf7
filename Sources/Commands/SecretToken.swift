import Foundation
import UUIDText

/// Bearer secrets handed to clients (auth tokens, drop tokens): 256 bits from the system's
/// secure generator, URL-safe base64 without padding (43 characters).
public enum SecretToken {
    public static func generate() -> String {
        // One getrandom call (drawing byte by byte made 32 of them per token: with the string
        // replacing below, 5 % of a sign-up's server CPU).
        base64URL(SecureRandom.bytes(32))
    }

    /// URL-safe base64 without padding, byte by byte (`replacingOccurrences` went through NSString).
    static func base64URL(_ bytes: [UInt8]) -> String {
        let encoded = Data(bytes).base64EncodedData().compactMap { byte -> UInt8? in
            switch byte {
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            case UInt8(ascii: "="): nil
            default: byte
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }
}
