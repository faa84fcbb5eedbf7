import Foundation

/// The one text form of a UUID in SniffMeet: lowercase 8-4-4-4-12, as PostgreSQL prints `uuid`
/// and as stream names, events and the API show ids. A module of its own because `Domain` and
/// `Postgres`, which must not depend on each other, both write it on hot paths.
extension UUID {
    /// The canonical lowercase text, e.g. `"0a1b2c3d-…"`.
    ///
    /// Written byte by byte: `uuidString` formats through `snprintf` (16 `%02X`) and then needs
    /// `lowercased()`; together they were about 2% of the server's CPU per SendWalk.
    public var lowercasedString: String {
        String(unsafeUninitializedCapacity: 36) { text in
            writeLowercase(into: text)
            return 36
        }
    }

    /// Appends the canonical lowercase text to `out` (answers and parameters built as bytes).
    public func appendLowercase(to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
            writeLowercase(into: text)
            out.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    /// Writes the 36 bytes of the canonical text into `text`, which holds at least 36 (names
    /// that embed ids build their text in one allocation).
    public func writeLowercase(into text: UnsafeMutableBufferPointer<UInt8>) {
        withUnsafeBytes(of: uuid) { bytes in
            var position = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                text[position] = Self.hexDigit(byte >> 4)
                text[position + 1] = Self.hexDigit(byte & 0x0F)
                position += 2
            }
        }
    }

    /// Parses the 8-4-4-4-12 text in either case; nil for anything else (braces, no dashes,
    /// other lengths). Byte by byte: Foundation's `UUID(uuidString:)` goes through `sscanf`.
    public init?(text: some StringProtocol) {
        var text = String(text)
        guard let parsed = text.withUTF8({ (bytes: UnsafeBufferPointer<UInt8>) in UUID(text: bytes) }) else { return nil }
        self = parsed
    }

    /// Parses the text's UTF-8 bytes (a database cell, a request buffer).
    public init?(text: UnsafeBufferPointer<UInt8>) {
        guard text.count == 36 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &uuid) { bytes -> Bool in
            var index = 0
            var high: UInt8? = nil
            for (offset, character) in text.enumerated() {
                if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                    guard character == UInt8(ascii: "-") else { return false }
                    continue
                }
                let nibble: UInt8
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
                default: return false
                }
                if let first = high {
                    bytes[index] = first << 4 | nibble
                    index += 1
                    high = nil
                } else {
                    high = nibble
                }
            }
            return true
        }
        guard valid else { return nil }
        self.init(uuid: uuid)
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
