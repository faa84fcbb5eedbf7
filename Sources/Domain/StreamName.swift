import Foundation
import UUIDText

/// The name of one event stream (one aggregate) in the log.
///
/// Four kinds exist, each named by a fixed prefix:
/// `user-<uuid>`, `nickname-<nickname key>`, `mates-<lo uuid>-<hi uuid>`, `walk-<uuid>`.
/// UUIDs are always rendered lowercase so that one aggregate has exactly one name.
public struct StreamName: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The kinds of stream, one per aggregate.
    public enum Kind: String, Sendable, CaseIterable {
        case user, nickname, mates, walk, chat
        case walkLog = "walklog"
    }

    /// The name as stored in the log.
    public let rawValue: String

    /// Parses a stored stream name; `nil` when it has no known kind prefix.
    public init?(rawValue: String) {
        guard Self.kind(of: rawValue) != nil else { return nil }
        self.rawValue = rawValue
    }

    private init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// The stream of one user (owner and dog): registration, profile, device token.
    public static func user(_ id: UUID) -> StreamName {
        StreamName(unchecked: "user-\(id.lowercasedString)")
    }

    /// The stream reserving one nickname, named by its `FreeText.nicknameKey`, so "Rex", "rex"
    /// and "ｒｅｘ" collide (for ASCII the key is the lowercased nickname, as it always was).
    public static func nickname(_ nickname: String) -> StreamName {
        StreamName(unchecked: "nickname-\(FreeText.nicknameKey(nickname))")
    }

    /// The stream of everything between two users; the same name whichever order they come in.
    public static func mates(_ a: UUID, _ b: UUID) -> StreamName {
        mates(MatePair(a, b))
    }

    /// The stream of everything between the two users of `pair`.
    public static func mates(_ pair: MatePair) -> StreamName {
        StreamName(unchecked: "mates-\(pair.lo.lowercasedString)-\(pair.hi.lowercasedString)")
    }

    /// The stream of one walk request.
    public static func walk(_ id: UUID) -> StreamName {
        StreamName(unchecked: "walk-\(id.lowercasedString)")
    }

    /// The stream of one walk log (a recorded walk).
    public static func walkLog(_ id: UUID) -> StreamName {
        StreamName(unchecked: "walklog-\(id.lowercasedString)")
    }

    /// The conversation of two mates; the same name whichever order they come in.
    public static func chat(_ a: UUID, _ b: UUID) -> StreamName {
        let pair = MatePair(a, b)
        return StreamName(unchecked: "chat-\(pair.lo.lowercasedString)-\(pair.hi.lowercasedString)")
    }

    /// Which aggregate this stream holds.
    public var kind: Kind {
        // Every instance was built by a factory or validated by `init?(rawValue:)`.
        Self.kind(of: rawValue) ?? .user
    }

    public var description: String { rawValue }

    private static func kind(of rawValue: String) -> Kind? {
        Kind.allCases.first { rawValue.hasPrefix($0.rawValue + "-") && rawValue.count > $0.rawValue.count + 1 }
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let name = StreamName(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown stream kind: \(raw)")
        }
        self = name
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
