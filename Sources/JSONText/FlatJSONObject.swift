/// A request body read the quick way: a JSON object whose members are plain strings, numbers
/// without exponent, `true`, `false`, `null` or arrays of plain strings.
///
/// The hot commands' bodies (sign-up, mate request, walk, walk answer, chat message) are such
/// objects, and Foundation's `JSONDecoder` was their largest single cost in the server (4.6 % of
/// its samples per walk sent, `perf record`). Anything else, a string with an escape, a control
/// character or invalid UTF-8, a nested object, an exponent, a repeated member, text after the
/// object, makes `init` return nil: the caller then decodes with `JSONDecoder`, which stays the
/// one judge of what is valid and of every error's wording. So this reader only has to be right
/// about what it accepts, never about what it refuses.
public struct FlatJSONObject {
    /// A member's value.
    private enum Value {
        case string(String)
        /// A number's literal: `-?(0|[1-9][0-9]*)(\.[0-9]+)?`.
        case number(String)
        case bool(Bool)
        case null
        case strings([String])
    }

    private let members: [String: Value]

    /// The object `bytes` hold, or nil when they are not one of the plain shape above.
    public init?(_ bytes: some Collection<UInt8>) {
        let contiguous = bytes.withContiguousStorageIfAvailable { Self.read(Reader(bytes: $0)) }
        guard let members = contiguous ?? Array(bytes).withUnsafeBufferPointer({ Self.read(Reader(bytes: $0)) }) else { return nil }
        self.members = members
    }

    /// A string member; nil when absent or not a string.
    public func string(_ key: String) -> String? {
        if case .string(let value) = members[key] { value } else { nil }
    }

    /// A number member as a `Double`; nil when absent, not a number, or not a short literal (a
    /// long one may be beyond a `Double`, a case `JSONDecoder` judges).
    public func double(_ key: String) -> Double? {
        guard case .number(let literal) = members[key], literal.utf8.count <= 24, let value = Double(literal), value.isFinite
        else { return nil }
        return value
    }

    /// A number member written as an integer that fits an `Int`; nil otherwise.
    public func int(_ key: String) -> Int? {
        if case .number(let literal) = members[key] { Int(literal) } else { nil }
    }

    public func bool(_ key: String) -> Bool? {
        if case .bool(let value) = members[key] { value } else { nil }
    }

    public func strings(_ key: String) -> [String]? {
        if case .strings(let value) = members[key] { value } else { nil }
    }

    /// An optional string member: `.some(nil)` when absent or null, nil when of another type.
    public func optionalString(_ key: String) -> String?? {
        switch members[key] {
        case nil, .null: .some(nil)
        case .string(let value): .some(value)
        default: nil
        }
    }

    private static func read(_ reader: Reader) -> [String: Value]? {
        var reader = reader
        var members: [String: Value] = [:]
        reader.skipSpace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        reader.skipSpace()
        if !reader.take(UInt8(ascii: "}")) {
            repeat {
                reader.skipSpace()
                guard let key = reader.string() else { return nil }
                reader.skipSpace()
                guard reader.take(UInt8(ascii: ":")) else { return nil }
                reader.skipSpace()
                guard let value = reader.value(), members.updateValue(value, forKey: key) == nil else { return nil }
                reader.skipSpace()
            } while reader.take(UInt8(ascii: ","))
            guard reader.take(UInt8(ascii: "}")) else { return nil }
        }
        reader.skipSpace()
        return reader.atEnd ? members : nil
    }

    /// A cursor over the body's bytes.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index == bytes.count }

        private var next: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func take(_ byte: UInt8) -> Bool {
            guard next == byte else { return false }
            index += 1
            return true
        }

        mutating func skipSpace() {
            while let byte = next, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func value() -> Value? {
            switch next {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "["): return strings().map(Value.strings)
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default: return number().map(Value.number)
            }
        }

        /// A string without escapes or control characters, of valid UTF-8.
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while let byte = next, byte != UInt8(ascii: "\"") {
                guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            guard !atEnd else { return nil }
            let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            index += 1
            return text
        }

        mutating func strings() -> [String]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var strings: [String] = []
            skipSpace()
            if take(UInt8(ascii: "]")) { return strings }
            repeat {
                skipSpace()
                guard let string = string() else { return nil }
                strings.append(string)
                skipSpace()
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "]")) ? strings : nil
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count,
                UnsafeBufferPointer(rebasing: bytes[index..<index + count]).elementsEqual(
                    UnsafeBufferPointer(start: word.utf8Start, count: count)
                )
            else { return false }
            index += count
            return isDelimiter
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, followed by a delimiter (an exponent is not read here).
        mutating func number() -> String? {
            let start = index
            _ = take(UInt8(ascii: "-"))
            guard let first = next, isDigit(first) else { return nil }
            index += 1
            if first != UInt8(ascii: "0") { while let byte = next, isDigit(byte) { index += 1 } }
            if take(UInt8(ascii: ".")) {
                guard let byte = next, isDigit(byte) else { return nil }
                while let byte = next, isDigit(byte) { index += 1 }
            }
            guard isDelimiter else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }

        /// At the end, or at what may follow a value.
        private var isDelimiter: Bool {
            guard let byte = next else { return true }
            return byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == 0x20 || byte == 0x0A
                || byte == 0x0D || byte == 0x09
        }

        private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    }
}
