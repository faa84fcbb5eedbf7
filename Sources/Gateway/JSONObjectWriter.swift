import Domain
import Foundation

/// An answer that writes its members straight into an open JSON object.
///
/// The API's answer types (cards, profiles, mates, requests, walks, notifications, pages) write
/// themselves this way instead of through `Encodable`: the Codable machinery (a boxed container
/// per value, generic dispatch per field) cost more than the database per list request. The
/// member names here are the API's; the OpenAPI drift test and the route tests check them.
public protocol JSONObjectWritable {
    func writeMembers(_ object: inout JSONObjectWriter) throws
}

/// Writes the members of one open JSON object.
public struct JSONObjectWriter {
    let writer: JSONByteWriter
    private var count = 0

    init(writer: JSONByteWriter) {
        self.writer = writer
    }

    private mutating func key(_ name: StaticString) {
        // Member names are the API's constants: nothing to escape.
        if count > 0 { writer.bytes.append(UInt8(ascii: ",")) }
        count += 1
        writer.bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { writer.bytes.append(contentsOf: $0) }
        writer.bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    /// A string, or `null`.
    public mutating func string(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { writer.writeString(value) } else { writer.append("null") }
    }

    /// A uuid in the API's lowercase form, or `null`.
    public mutating func id(_ name: StaticString, _ value: UUID?) {
        key(name)
        guard let value else { return writer.append("null") }
        writer.bytes.append(UInt8(ascii: "\""))
        value.appendLowercase(to: &writer.bytes)
        writer.bytes.append(UInt8(ascii: "\""))
    }

    /// A timestamp as `YYYY-MM-DDTHH:MM:SS.mmmZ`, or `null`.
    public mutating func timestamp(_ name: StaticString, _ value: Date?) {
        key(name)
        guard let value else { return writer.append("null") }
        writer.bytes.append(UInt8(ascii: "\""))
        Timestamp.appendUTF8(value, to: &writer.bytes)
        writer.bytes.append(UInt8(ascii: "\""))
    }

    public mutating func int(_ name: StaticString, _ value: Int) {
        key(name)
        writer.append(String(value))
    }

    public mutating func bool(_ name: StaticString, _ value: Bool) {
        key(name)
        writer.append(value ? "true" : "false")
    }

    /// A finite number, or `null`.
    public mutating func number(_ name: StaticString, _ value: Double?) throws {
        key(name)
        if let value { try writer.writeDouble(value) } else { writer.append("null") }
    }

    public mutating func strings(_ name: StaticString, _ values: [String]) {
        key(name)
        writer.bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            writer.writeString(value)
        }
        writer.bytes.append(UInt8(ascii: "]"))
    }

    /// A nested object.
    public mutating func object(_ name: StaticString, _ value: some JSONObjectWritable) throws {
        key(name)
        try writer.writeObject(value)
    }

    /// A nested object written by `body`.
    public mutating func object(_ name: StaticString, _ body: (inout JSONObjectWriter) throws -> Void) rethrows {
        key(name)
        writer.bytes.append(UInt8(ascii: "{"))
        var nested = JSONObjectWriter(writer: writer)
        try body(&nested)
        writer.bytes.append(UInt8(ascii: "}"))
    }

    /// An array of objects.
    public mutating func objects<Item: JSONObjectWritable>(_ name: StaticString, _ items: [Item]) throws {
        key(name)
        writer.bytes.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            try writer.writeObject(item)
        }
        writer.bytes.append(UInt8(ascii: "]"))
    }
}

extension JSONByteWriter {
    func writeObject(_ value: some JSONObjectWritable) throws {
        bytes.append(UInt8(ascii: "{"))
        var object = JSONObjectWriter(writer: self)
        try value.writeMembers(&object)
        bytes.append(UInt8(ascii: "}"))
    }
}
