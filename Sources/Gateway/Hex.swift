/// Lowercase hexadecimal text of bytes (digests on every authenticated request: no `String(format:)`).
func hex(_ bytes: some Sequence<UInt8>) -> String {
    var text: [UInt8] = []
    text.reserveCapacity(64)
    for byte in bytes {
        text.append(hexDigits[Int(byte >> 4)])
        text.append(hexDigits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}

/// Lowercase hexadecimal digits by value.
let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
