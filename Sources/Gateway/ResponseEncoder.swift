import Foundation
import JSONText

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
        Data(try bytes(value))
    }

    /// The JSON text of an answer object as bytes.
    public func bytes(_ value: some JSONObjectWritable) throws -> [UInt8] {
        var writer = JSONObjectWriter()
        try writer.writeObject(value)
        return writer.bytes
    }

    /// The JSON text of any other answer.
    public func encode(_ value: some Encodable) throws -> Data {
        try JSONEncoder().encode(value)
    }
}
