import Foundation

/// Bearer secrets handed to clients (auth tokens, drop tokens): 256 bits from the system's
/// secure generator, URL-safe base64 without padding (43 characters).
public enum SecretToken {
    public static func generate() -> String {
        // Eight bytes per draw: each draw is one getrandom call, and drawing byte by byte made 32
        // of them per token (with the string replacing below, 5 % of a sign-up's server CPU).
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<4 { withUnsafeBytes(of: generator.next() as UInt64) { bytes += $0 } }
        return base64URL(bytes)
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
