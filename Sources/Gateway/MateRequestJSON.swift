import Domain
import Foundation

/// A mate request as API.md shows it.
public struct MateRequestJSON: Encodable, Sendable {
    public var requestID: UUID
    public var from: CardJSON
    public var to: CardJSON
    public var status: String
    public var createdAt: Date
    public var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case requestID = "request_id", from, to, status, createdAt = "created_at", updatedAt = "updated_at"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(requestID.uuidString.lowercased(), forKey: .requestID)
        try c.encode(from, forKey: .from)
        try c.encode(to, forKey: .to)
        try c.encode(status, forKey: .status)
        try c.encode(Timestamp.string(from: createdAt), forKey: .createdAt)
        try c.encode(Timestamp.string(from: updatedAt), forKey: .updatedAt)
    }
}

/// One entry of `GET /v1/me/mates`: the mate's card plus `mates_since`.
public struct MateJSON: Encodable, Sendable {
    public var card: CardJSON
    public var matesSince: Date

    enum CodingKeys: String, CodingKey { case matesSince = "mates_since" }

    public func encode(to encoder: Encoder) throws {
        try card.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Timestamp.string(from: matesSince), forKey: .matesSince)
    }
}
