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
    /// Which aggregate this stream holds: known from the factory that made the name, or parsed
    /// once from its prefix (commands ask it of every stream they load, several times).
    public let kind: Kind
    /// `rawValue`'s hash, taken once: a name keys every state, cache and version map a command
    /// touches, a dozen lookups per request, and hashing its 40–80 bytes again for each was the
    /// larger part of the hashing in a walk's server profile.
    private let hashOfName: Int

    /// Parses a stored stream name; `nil` when it has no known kind prefix.
    public init?(rawValue: String) {
        guard let kind = Self.kind(of: rawValue) else { return nil }
        self.rawValue = rawValue
        self.kind = kind
        self.hashOfName = rawValue.hashValue
    }

    private init(_ kind: Kind, _ id: String) {
        self.rawValue = "\(kind.rawValue)-\(id)"
        self.kind = kind
        self.hashOfName = rawValue.hashValue
    }

    /// `<kind>-<id>` or `<kind>-<id>-<second>`, the text made in one allocation: interpolating
    /// `lowercasedString`s made up to three strings per name, and a command makes a dozen names.
    private init(_ kind: Kind, _ id: UUID, _ second: UUID? = nil) {
        let prefix = kind.rawValue.utf8
        let length = prefix.count + 37 + (second == nil ? 0 : 37)
        self.rawValue = String(unsafeUninitializedCapacity: length) { text in
            var position = text.initialize(fromContentsOf: prefix)
            func append(_ id: UUID) {
                text[position] = UInt8(ascii: "-")
                id.writeLowercase(into: UnsafeMutableBufferPointer(rebasing: text[(position + 1)...]))
                position += 37
            }
            append(id)
            if let second { append(second) }
            return position
        }
        self.kind = kind
        self.hashOfName = rawValue.hashValue
    }

    /// The stream of one user (owner and dog): registration, profile, device token.
    public static func user(_ id: UUID) -> StreamName {
        StreamName(.user, id)
    }

    /// The stream reserving one nickname, named by its `FreeText.nicknameKey`, so "Rex", "rex"
    /// and "ｒｅｘ" collide (for ASCII the key is the lowercased nickname, as it always was).
    public static func nickname(_ nickname: String) -> StreamName {
        StreamName(.nickname, FreeText.nicknameKey(nickname))
    }

    /// The stream of everything between two users; the same name whichever order they come in.
    public static func mates(_ a: UUID, _ b: UUID) -> StreamName {
        mates(MatePair(a, b))
    }

    /// The stream of everything between the two users of `pair`.
    public static func mates(_ pair: MatePair) -> StreamName {
        StreamName(.mates, pair.lo, pair.hi)
    }

    /// The stream of one walk request.
    public static func walk(_ id: UUID) -> StreamName {
        StreamName(.walk, id)
    }

    /// The stream of one walk log (a recorded walk).
    public static func walkLog(_ id: UUID) -> StreamName {
        StreamName(.walkLog, id)
    }

    /// The conversation of two mates; the same name whichever order they come in.
    public static func chat(_ a: UUID, _ b: UUID) -> StreamName {
        let pair = MatePair(a, b)
        return StreamName(.chat, pair.lo, pair.hi)
    }

    public var description: String { rawValue }

    // The kind follows from the name: equal names, equal kinds.
    public static func == (lhs: StreamName, rhs: StreamName) -> Bool {
        lhs.hashOfName == rhs.hashOfName && lhs.rawValue == rhs.rawValue
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(hashOfName) }

    /// What `Set` and `Dictionary` ask of a key, without a `Hasher`: `hashOfName` is already
    /// `String`'s seeded SipHash of the name, so mixing in each table's `seed` (the SplitMix64
    /// finalizer, a bijection) is all that is left. Through `hash(into:)` every lookup started
    /// and finalized a SipHash of its own, about 1 % of a walk request's server CPU.
    public func _rawHashValue(seed: Int) -> Int {
        var mixed = UInt64(truncatingIfNeeded: hashOfName ^ seed)
        mixed = (mixed ^ (mixed >> 30)) &* 0xbf58_476d_1ce4_e5b9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94d0_49bb_1331_11eb
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 31))
    }

    /// The kind whose prefix and "-" start `rawValue`, with something after them.
    private static func kind(of rawValue: String) -> Kind? {
        let name = rawValue.utf8
        return Kind.allCases.first { kind in
            let prefix = kind.rawValue.utf8
            return name.count > prefix.count + 1 && name.starts(with: prefix)
                && name[name.index(name.startIndex, offsetBy: prefix.count)] == UInt8(ascii: "-")
        }
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
