import Foundation
import UUIDText

/// Writes an event's JSON as bytes, exactly as `JSONEncoder` with the log's options writes it
/// (sorted keys, no escaped slashes, lowercase UUIDs, `Timestamp` dates), for the events the
/// busiest commands append: the encoder was 5 % of the server's CPU per SendWalk and 4–7 % per
/// chat send. The caller names the members in sorted key order, each with the part it belongs
/// to (`EventPart`); members of the other part are skipped.
///
/// Text the writer cannot quote exactly like the encoder (control characters, U+2028/2029)
/// and numbers it cannot format exactly like it (exponents, negative zero) make `text(_:_:)`
/// and `number(_:_:)` return false; the caller then encodes with `JSONEncoder` as before.
/// `EventJSONTests` compares both on many random events of each kind.
struct EventJSONWriter {
    private var bytes: [UInt8] = []
    private let part: EventPart
    private var first = true

    init(_ part: EventPart, capacity: Int = 256) {
        self.part = part
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// The finished object.
    mutating func data() -> Data { Data(closed()) }

    /// Starts a member: `key` is `"name":` as the JSON has it. False when the member belongs to
    /// the part not written.
    private mutating func member(_ key: StaticString, personal: Bool) -> Bool {
        guard personal ? part.writesPersonal : part.writesClear else { return false }
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        return true
    }

    mutating func uuid(_ key: StaticString, _ value: UUID, personal: Bool = false) {
        guard member(key, personal: personal) else { return }
        bytes.append(UInt8(ascii: "\""))
        value.appendLowercase(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func uuid(_ key: StaticString, _ value: UUID?, personal: Bool = false) {
        guard let value else { return null(key, personal: personal) }
        uuid(key, value, personal: personal)
    }

    mutating func date(_ key: StaticString, _ value: Date, personal: Bool = false) {
        guard member(key, personal: personal) else { return }
        bytes.append(UInt8(ascii: "\""))
        Timestamp.appendUTF8(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func int(_ key: StaticString, _ value: Int, personal: Bool = false) {
        guard member(key, personal: personal) else { return }
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func bool(_ key: StaticString, _ value: Bool, personal: Bool = false) {
        guard member(key, personal: personal) else { return }
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func null(_ key: StaticString, personal: Bool = false) {
        guard member(key, personal: personal) else { return }
        bytes.append(contentsOf: "null".utf8)
    }

    /// A text that needs no escaping (the raw value of one of the domain's enums).
    mutating func name(_ key: StaticString, _ value: String, personal: Bool = false) {
        guard member(key, personal: personal) else { return }
        appendName(value)
    }

    /// An array of texts that need no escaping (the raw values of the domain's enums).
    mutating func names(_ key: StaticString, _ values: [String], personal: Bool = false) {
        guard member(key, personal: personal) else { return }
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendName(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    private mutating func appendName(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: value.utf8)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A member whose value is a finished object (another writer's `closed()` bytes).
    mutating func object(_ key: StaticString, _ object: [UInt8], personal: Bool = false) {
        guard member(key, personal: personal) else { return }
        bytes.append(contentsOf: object)
    }

    /// The finished object's bytes, to nest in another (`object(_:_:personal:)`).
    mutating func closed() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// False (nothing written) when `value` is not plain text (`isPlain`).
    mutating func text(_ key: StaticString, _ value: String?, personal: Bool = false) -> Bool {
        guard let value else {
            null(key, personal: personal)
            return true
        }
        guard Self.isPlain(value) else { return false }
        guard member(key, personal: personal) else { return true }
        bytes.append(UInt8(ascii: "\""))
        // `"` and `\` escaped, everything else as is: byte by byte is safe, as neither byte
        // occurs inside a multi-byte UTF-8 sequence.
        for byte in value.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
        return true
    }

    /// False (nothing written) when the encoder would not write `value` as plain digits.
    mutating func number(_ key: StaticString, _ value: Double, personal: Bool = false) -> Bool {
        guard let text = Self.plainNumber(value) else { return false }
        guard member(key, personal: personal) else { return true }
        bytes.append(contentsOf: text.utf8)
        return true
    }

    /// A double as the encoder writes it, when that is plain digits: integral values without
    /// ".0", others by their shortest round-trip form.
    static func plainNumber(_ value: Double) -> String? {
        guard value.isFinite, !(value == 0 && value.sign == .minus) else { return nil }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = value.description
        // Bytes: `String.contains(_:)` with a string goes through Foundation (NSString bridging).
        return text.utf8.contains(UInt8(ascii: "e")) ? nil : text
    }

    /// Text the writer quotes exactly like the encoder: no control characters, no U+2028/2029.
    static func isPlain(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F && $0.value != 0x2028 && $0.value != 0x2029 }
    }
}
