import Domain
import Foundation
import UUIDText

/// An answer that writes its members straight into an open JSON object.
///
/// The API's answer types (cards, profiles, mates, requests, walks, notifications, pages) write
/// themselves this way instead of through `Encodable`: the Codable machinery (a boxed container
/// per value, generic dispatch per field) cost more than the database per list request. The
/// member names here are the API's; the OpenAPI drift test and the route tests check them.
public protocol JSONObjectWritable {
    func writeMembers(_ object: inout JSONObjectWriter) throws
}

/// Writes one answer's JSON text, member by member, into one growing byte array.
///
/// A value type passed `inout` all the way down: nested objects reuse the same writer and only
/// save and restore the member count of the object around them. (A shared buffer object cost
/// a dynamic exclusivity check on every byte appended.)
public struct JSONObjectWriter {
    /// The JSON text so far.
    public private(set) var bytes: [UInt8] = []
    /// Members already written to the innermost open object: the next one needs a comma.
    private var count = 0

    public init(capacity: Int = 4096) {
        bytes.reserveCapacity(capacity)
    }

    /// `value` as a whole object.
    public mutating func writeObject(_ value: some JSONObjectWritable) throws {
        try writeObject { try value.writeMembers(&$0) }
    }

    /// A whole object whose members `body` writes.
    public mutating func writeObject(_ body: (inout JSONObjectWriter) throws -> Void) rethrows {
        let outer = open()
        try body(&self)
        close(outer)
    }

    /// The members of `object`, a JSON object's text written elsewhere (a stored card), as
    /// members of the object being written.
    public mutating func members(ofObject object: [UInt8]) {
        precondition(object.first == UInt8(ascii: "{") && object.last == UInt8(ascii: "}"), "not a JSON object")
        let inner = object.dropFirst().dropLast()
        guard !inner.isEmpty else { return }
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(contentsOf: inner)
        count += 1
    }

    /// A string, or `null`.
    public mutating func string(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { writeString(value) } else { writeNull() }
    }

    /// A uuid in the API's lowercase form, or `null`.
    public mutating func id(_ name: StaticString, _ value: UUID?) {
        key(name)
        guard let value else { return writeNull() }
        bytes.append(UInt8(ascii: "\""))
        value.appendLowercase(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A timestamp as `YYYY-MM-DDTHH:MM:SS.mmmZ`, or `null`.
    public mutating func timestamp(_ name: StaticString, _ value: Date?) {
        key(name)
        guard let value else { return writeNull() }
        bytes.append(UInt8(ascii: "\""))
        Timestamp.appendUTF8(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func int(_ name: StaticString, _ value: Int) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func bool(_ name: StaticString, _ value: Bool) {
        key(name)
        append(value ? "true" : "false")
    }

    /// A finite number, or `null`.
    public mutating func number(_ name: StaticString, _ value: Double?) throws {
        key(name)
        guard let value else { return writeNull() }
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(value) is not valid in JSON"))
        }
        bytes.append(contentsOf: value.description.utf8)
    }

    /// An array of strings.
    public mutating func strings(_ name: StaticString, _ values: some Sequence<String>) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        var first = true
        for value in values {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            writeString(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A nested object.
    public mutating func object(_ name: StaticString, _ value: some JSONObjectWritable) throws {
        key(name)
        try writeObject(value)
    }

    /// A nested object written by `body`.
    public mutating func object(_ name: StaticString, _ body: (inout JSONObjectWriter) throws -> Void) rethrows {
        key(name)
        let outer = open()
        try body(&self)
        close(outer)
    }

    /// An array of objects.
    public mutating func objects<Item: JSONObjectWritable>(_ name: StaticString, _ items: [Item]) throws {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for index in items.indices {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try writeObject(items[index])
        }
        bytes.append(UInt8(ascii: "]"))
    }

    // MARK: Text

    private mutating func open() -> Int {
        bytes.append(UInt8(ascii: "{"))
        defer { count = 0 }
        return count
    }

    private mutating func close(_ outer: Int) {
        bytes.append(UInt8(ascii: "}"))
        count = outer
    }

    private mutating func key(_ name: StaticString) {
        // Member names are the API's constants: nothing to escape.
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        count += 1
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func writeNull() {
        append("null")
    }

    private mutating func writeString(_ string: String) {
        appendQuoted(string, to: &bytes)
    }
}
