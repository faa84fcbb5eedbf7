import Domain
import Foundation

/// A walk request as API.md shows it.
public struct WalkJSON: Encodable, Sendable {
    public var walkID: UUID
    public var from: CardJSON
    public var to: CardJSON
    public var message: String
    public var latitude: Double
    public var longitude: Double
    public var placeName: String?
    public var status: String
    public var createdAt: Date
    public var expiresAt: Date
    public var answeredAt: Date?

    enum CodingKeys: String, CodingKey {
        case walkID = "walk_id", from, to, message, latitude, longitude, placeName = "place_name", status
        case createdAt = "created_at", expiresAt = "expires_at", answeredAt = "answered_at"
    }

    /// A pending walk past its deadline is shown as `expired` even before the expiry job wrote
    /// it: it can no longer be answered (the domain refuses), so "pending" would mislead.
    static func shownStatus(_ status: String, expiresAt: Date, now: Date = Date()) -> String {
        status == "pending" && expiresAt <= now ? "expired" : status
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(walkID.uuidString.lowercased(), forKey: .walkID)
        try c.encode(from, forKey: .from)
        try c.encode(to, forKey: .to)
        try c.encode(message, forKey: .message)
        try c.encode(latitude, forKey: .latitude)
        try c.encode(longitude, forKey: .longitude)
        try c.encode(placeName, forKey: .placeName)
        try c.encode(status, forKey: .status)
        try c.encode(Timestamp.string(from: createdAt), forKey: .createdAt)
        try c.encode(Timestamp.string(from: expiresAt), forKey: .expiresAt)
        try c.encode(answeredAt.map(Timestamp.string(from:)), forKey: .answeredAt)
    }
}
