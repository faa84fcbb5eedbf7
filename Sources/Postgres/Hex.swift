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
}
