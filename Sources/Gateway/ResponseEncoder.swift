import Foundation

/// Encodes answers to JSON bytes.
///
/// The API's answer objects (cards, profiles, mates, requests, walks, notifications, pages)
/// write themselves in one pass (`JSONObjectWritable`): Foundation's `JSONEncoder` first builds
/// a tree of boxed values and then serializes it, which for a page of twenty dog cards was a
/// third of the server's CPU per request (measured with perf under `scripts/bench-http`). The
/// few other answers (errors, operations) are small and rare, and go through `JSONEncoder`.
public struct ResponseEncoder: Sendable {
    public init() {}

    /// The JSON text of an answer object.
    public func encode(_ value: some JSONObjectWritable) throws -> Data {
        let writer = JSONByteWriter()
        try writer.writeObject(value)
        return Data(writer.bytes)
    }

    /// The JSON text of any other answer.
    public func encode(_ value: some Encodable) throws -> Data {
        try JSONEncoder().encode(value)
    }
}

/// The output buffer of one answer.
final class JSONByteWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(4096) }

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
}
