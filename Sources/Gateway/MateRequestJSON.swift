import Domain
import Foundation
import JSONText

/// A mate request as API.md shows it.
public struct MateRequestJSON: JSONObjectWritable, Sendable {
    public var requestID: UUID
    public var from: CardJSON
    public var to: CardJSON
    public var status: String
    public var createdAt: Date
    public var updatedAt: Date

    public func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("request_id", requestID)
        try object.object("from", from)
        try object.object("to", to)
        object.string("status", status)
        object.timestamp("created_at", createdAt)
        object.timestamp("updated_at", updatedAt)
    }
}

/// One entry of `GET /v1/me/mates`: the mate's card plus `mates_since`.
public struct MateJSON: JSONObjectWritable, Sendable {
    public var card: CardJSON
    public var matesSince: Date

    public func writeMembers(_ object: inout JSONObjectWriter) {
        card.writeMembers(&object)
        object.timestamp("mates_since", matesSince)
    }
}
