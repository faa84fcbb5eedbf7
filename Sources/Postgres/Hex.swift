/// Lowercase hexadecimal text of bytes: `bytea` parameters, digests (auth tokens, idempotency
/// keys, migration checksums) and escapes. The one encoder of the project, in its lowest
/// module; byte arithmetic rather than `String(format:)`, since digests are hexed on every
/// authenticated request.
public enum Hex {
    /// The lowercase digits by value.
    public static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends two lowercase digits per byte to `out`.
    @inlinable
    public static func append(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        let digits = Self.digits
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
    }

    /// Two lowercase digits per byte, e.g. `"00ff10"`.
    @inlinable
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        append(bytes, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of hex text (either case), or nil when it is not whole hex digit pairs.
    public static func bytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(of: digits[index]), let low = value(of: digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
