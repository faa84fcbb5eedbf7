import Foundation

/// Lowercase hexadecimal text of bytes (digests on every authenticated request: no `String(format:)`).
func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(64)
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}

/// Appends `id` in the API's lowercase 8-4-4-4-12 form.
func appendLowercase(_ id: UUID, to text: inout [UInt8]) {
    let digits: StaticString = "0123456789abcdef"
    withUnsafeBytes(of: id.uuid) { bytes in
        digits.withUTF8Buffer { digits in
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
        }
    }
}
