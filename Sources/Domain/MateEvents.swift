import Foundation
import UUIDText

// Payloads of the `mates-<lo>-<hi>` stream. `from` is always the requester and `to` the
// addressee of the request, whoever acted, so projectors never need earlier events.

/// `mate_requested`, `mate_declined`, `mate_request_cancelled`: a step of one mate request.
public struct MateRequestUpdate: Sendable, Equatable, Codable {
    public var requestID: UUID
    /// The requester.
    public var from: UUID
    /// The addressee.
    public var to: UUID
    public var at: Date

    public init(requestID: UUID, from: UUID, to: UUID, at: Date) {
        self.requestID = requestID
        self.from = from
        self.to = to
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case requestID = "request_id"
        case from, to, at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(requestID.lowercasedString, forKey: .requestID)
        try c.encode(from.lowercasedString, forKey: .from)
        try c.encode(to.lowercasedString, forKey: .to)
        try c.encode(at, forKey: .at)
    }
}

/// `mate_accepted`: the request was accepted and the two are mates from `at` on.
public struct MateAccepted: Sendable, Equatable, Codable {
    public var requestID: UUID
    /// The requester.
    public var from: UUID
    /// The addressee.
    public var to: UUID
    public var at: Date
    /// `true` when it happened because the addressee asked the requester back
    /// (a mutual request) rather than by pressing "accept".
    public var mutual: Bool

    public init(requestID: UUID, from: UUID, to: UUID, at: Date, mutual: Bool) {
        self.requestID = requestID
        self.from = from
        self.to = to
        self.at = at
        self.mutual = mutual
    }

    enum CodingKeys: String, CodingKey {
        case requestID = "request_id"
        case from, to, at, mutual
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(requestID.lowercasedString, forKey: .requestID)
        try c.encode(from.lowercasedString, forKey: .from)
        try c.encode(to.lowercasedString, forKey: .to)
        try c.encode(at, forKey: .at)
        try c.encode(mutual, forKey: .mutual)
    }
}

/// `mates_unpaired`: `by` stopped being mates with `mate`.
public struct MatesUnpaired: Sendable, Equatable, Codable {
    /// Who unpaired.
    public var by: UUID
    /// The former mate.
    public var mate: UUID
    public var at: Date

    public init(by: UUID, mate: UUID, at: Date) {
        self.by = by
        self.mate = mate
        self.at = at
    }

    enum CodingKeys: String, CodingKey { case by, mate, at }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(by.lowercasedString, forKey: .by)
        try c.encode(mate.lowercasedString, forKey: .mate)
        try c.encode(at, forKey: .at)
    }
}
