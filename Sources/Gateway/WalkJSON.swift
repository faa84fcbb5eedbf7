import Domain
import Foundation
import JSONText

/// A walk request as API.md shows it.
public struct WalkJSON: JSONObjectWritable, Sendable {
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

    /// A pending walk past its deadline is shown as `expired` even before the expiry job wrote
    /// it: it can no longer be answered (the domain refuses), so "pending" would mislead.
    static func shownStatus(_ status: String, expiresAt: Date, now: Date = Date()) -> String {
        status == "pending" && expiresAt <= now ? "expired" : status
    }

    public func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("walk_id", walkID)
        try object.object("from", from)
        try object.object("to", to)
        object.string("message", message)
        try object.number("latitude", latitude)
        try object.number("longitude", longitude)
        object.string("place_name", placeName)
        object.string("status", status)
        object.timestamp("created_at", createdAt)
        object.timestamp("expires_at", expiresAt)
        object.timestamp("answered_at", answeredAt)
    }
}
