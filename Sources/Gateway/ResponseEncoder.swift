import Foundation

/// Encodes answers to JSON bytes in one pass: the API's answer objects write themselves
/// (`JSONObjectWritable`); everything else (errors, operations answers) goes through `Encodable`.
///
/// Foundation's `JSONEncoder` first builds a tree of boxed values and then serializes it; for a
/// page of twenty dog cards that was a third of the server's CPU per request (measured with
/// perf under `scripts/bench-http`). The answers here are plain structs, strings, numbers,
/// optionals, arrays and string-keyed dictionaries, which a streaming writer covers exactly:
/// keys appear in encoding order, a nil written with `encode` is `null`, `encodeIfPresent`
/// leaves the key out, and non-finite numbers are refused as `JSONEncoder` refuses them.
/// Types that encode themselves in several steps on one encoder (a card writing its fields and
/// then the profile's into the same object) end up in one object, as with `JSONEncoder`. Nested
/// containers are written in place; `superEncoder` is not supported (nothing here uses it).
public struct ResponseEncoder: Sendable {
    public init() {}

    /// The JSON text of an answer object.
    public func encode(_ value: some JSONObjectWritable) throws -> Data {
        let writer = JSONByteWriter()
        try writer.writeObject(value)
        return Data(writer.bytes)
    }

    /// The JSON text of `value`.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        let writer = JSONByteWriter()
        try writer.write(value)
        return Data(writer.bytes)
    }
}

/// The output buffer, shared by every container of one `encode` call.
final class JSONByteWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(4096) }

    func write<T: Encodable>(_ value: T) throws {
        // The common leaves without a trip through an encoder (metatype checks are cheaper than casts).
        if T.self == String.self {
            writeString(unsafeBitCast(value, to: String.self))
        } else if T.self == Int.self {
            append(String(unsafeBitCast(value, to: Int.self)))
        } else if T.self == Bool.self {
            append(unsafeBitCast(value, to: Bool.self) ? "true" : "false")
        } else if T.self == Double.self {
            try writeDouble(unsafeBitCast(value, to: Double.self))
        } else {
            let encoder = StreamingJSONEncoder(writer: self)
            try value.encode(to: encoder)
            encoder.close()
        }
    }

    func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

    func writeDouble(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(value) is not valid in JSON"))
        }
        append(value.description)
    }

    func writeString(_ string: String) {
        var string = string
        string.makeContiguousUTF8()
        let plain = string.utf8.withContiguousStorageIfAvailable { utf8 in
            !utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        } ?? false
        if plain {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: string.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        var escaped: [UInt8] = [UInt8(ascii: "\"")]
        escaped.reserveCapacity(string.utf8.count + 16)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): escaped += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): escaped += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: escaped += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: escaped += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: escaped += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                escaped += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                            hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: escaped.append(byte)
            }
        }
        escaped.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: escaped)
    }

    /// `"key":`, for keys known to need no escaping (the API's own snake_case names).
    func writeKey(_ key: String, comma: Bool) {
        var key = key
        key.makeContiguousUTF8()
        if comma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: key.utf8)
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }
}

/// The encoder handed to one value's `encode(to:)`: it opens at most one object or array (or
/// writes one single value) and closes it when the value is done.
final class StreamingJSONEncoder: Encoder {
    enum Opened { case nothing, object(count: Int), array(count: Int), single }

    let writer: JSONByteWriter
    /// Not tracked (it would cost an array per member); nothing here reads it.
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var opened: Opened = .nothing
    /// A nested container's encoder: it has no end of its own, so it is closed when this
    /// encoder writes its next member or element, or closes.
    var nested: StreamingJSONEncoder?

    init(writer: JSONByteWriter) {
        self.writer = writer
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch opened {
        case .nothing:
            writer.bytes.append(UInt8(ascii: "{"))
            opened = .object(count: 0)
        case .object: break  // a second container of the same value continues its object
        case .array, .single: preconditionFailure("a value asked for a keyed container after writing another kind")
        }
        return KeyedEncodingContainer(StreamingKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch opened {
        case .nothing:
            writer.bytes.append(UInt8(ascii: "["))
            opened = .array(count: 0)
        case .array: break
        case .object, .single: preconditionFailure("a value asked for an unkeyed container after writing another kind")
        }
        return StreamingUnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        StreamingSingleValueContainer(encoder: self)
    }

    /// Ends the value: closes its object or array; a value that wrote nothing is `{}`, as with `JSONEncoder`.
    func close() {
        closeNested()
        switch opened {
        case .nothing: writer.append("{}")
        case .object: writer.bytes.append(UInt8(ascii: "}"))
        case .array: writer.bytes.append(UInt8(ascii: "]"))
        case .single: break
        }
    }

    /// Writes `"key":` (with the separating comma) into the open object.
    func beginMember(_ key: String) {
        closeNested()
        guard case .object(let count) = opened else { preconditionFailure("no open object") }
        opened = .object(count: count + 1)
        if key.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            writer.writeKey(key, comma: count > 0)
        } else {
            if count > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            writer.writeString(key)
            writer.bytes.append(UInt8(ascii: ":"))
        }
    }

    /// Writes the separating comma before the next array element.
    func beginElement() -> Int {
        closeNested()
        guard case .array(let count) = opened else { preconditionFailure("no open array") }
        if count > 0 { writer.bytes.append(UInt8(ascii: ",")) }
        opened = .array(count: count + 1)
        return count
    }

    func closeNested() {
        if let nested {
            self.nested = nil
            nested.close()
        }
    }

    /// An encoder for a nested container, written in place as the next member or element.
    func nestedEncoder() -> StreamingJSONEncoder {
        let child = StreamingJSONEncoder(writer: writer)
        nested = child
        return child
    }

    func beginSingle() {
        guard case .nothing = opened else { preconditionFailure("a single value was encoded twice") }
        opened = .single
    }
}

struct StreamingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: StreamingJSONEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws {
        encoder.beginMember(key.stringValue)
        encoder.writer.append("null")
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        encoder.beginMember(key.stringValue)
        try encoder.writer.write(value)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        encoder.beginMember(key.stringValue)
        encoder.writer.writeString(value)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        encoder.beginMember(key.stringValue)
        encoder.writer.append(String(value))
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        encoder.beginMember(key.stringValue)
        encoder.writer.append(value ? "true" : "false")
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        encoder.beginMember(key.stringValue)
        try encoder.writer.writeDouble(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder.beginMember(key.stringValue)
        return encoder.nestedEncoder().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.beginMember(key.stringValue)
        return encoder.nestedEncoder().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { preconditionFailure("superEncoder is not used by the API's answers") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { preconditionFailure("superEncoder is not used by the API's answers") }
}

struct StreamingUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: StreamingJSONEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int {
        if case .array(let count) = encoder.opened { return count }
        return 0
    }

    mutating func encodeNil() throws {
        _ = encoder.beginElement()
        encoder.writer.append("null")
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        _ = encoder.beginElement()
        try encoder.writer.write(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        _ = encoder.beginElement()
        return encoder.nestedEncoder().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        _ = encoder.beginElement()
        return encoder.nestedEncoder().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { preconditionFailure("superEncoder is not used by the API's answers") }
}

struct StreamingSingleValueContainer: SingleValueEncodingContainer {
    let encoder: StreamingJSONEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws {
        encoder.beginSingle()
        encoder.writer.append("null")
    }

    mutating func encode(_ value: Bool) throws { encoder.beginSingle(); encoder.writer.append(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { encoder.beginSingle(); encoder.writer.writeString(value) }
    mutating func encode(_ value: Double) throws { encoder.beginSingle(); try encoder.writer.writeDouble(value) }
    mutating func encode(_ value: Float) throws { encoder.beginSingle(); try encoder.writer.writeDouble(Double(value)) }
    mutating func encode(_ value: Int) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }
    mutating func encode(_ value: Int8) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }
    mutating func encode(_ value: Int16) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }
    mutating func encode(_ value: Int32) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }
    mutating func encode(_ value: Int64) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }
    mutating func encode(_ value: UInt) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }
    mutating func encode(_ value: UInt8) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }
    mutating func encode(_ value: UInt16) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }
    mutating func encode(_ value: UInt32) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }
    mutating func encode(_ value: UInt64) throws { encoder.beginSingle(); encoder.writer.append(String(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.beginSingle()
        try encoder.writer.write(value)
    }
}
