/// Appends `text` in double quotes with `"`, `\` and control characters escaped as JSON escapes
/// them: a valid JSON string and a valid logfmt value alike (neither can break out of it).
public func appendQuoted(_ text: String, to out: inout [UInt8]) {
    var text = text
    out.append(UInt8(ascii: "\""))
    text.withUTF8 { utf8 in
        let needsEscape = { (byte: UInt8) in byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }
        guard utf8.contains(where: needsEscape) else { return out.append(contentsOf: utf8) }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
    }
    out.append(UInt8(ascii: "\""))
}

/// Lowercase hex digits for `\u00XX`.
private let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
