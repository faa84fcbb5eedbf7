import Foundation
import UUIDText

// Payloads of blocks (on the pair stream), reports and suspensions (on the user stream of the
// user they are about), and of emptying an inbox.

/// `user_blocked`, `user_unblocked`: `by` blocked (or unblocked) `blocked`. On the pair stream,
/// so a block and a concurrent mate request or walk between the two cannot both win.
public struct BlockUpdate: Sendable, Equatable, Codable {
    /// Who blocked.
    public var by: UUID
    /// Whom.
    public var blocked: UUID
    public var at: Date

    public init(by: UUID, blocked: UUID, at: Date) {
        self.by = by
        self.blocked = blocked
        self.at = at
    }

    enum CodingKeys: String, CodingKey { case by, blocked, at }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(by.lowercasedString, forKey: .by)
        try c.encode(blocked.lowercasedString, forKey: .blocked)
        try c.encode(at, forKey: .at)
    }
}

/// Why a user was reported (the `reason` of `POST /v1/reports`).
public enum ReportReason: String, Sendable, Equatable, Codable, CaseIterable {
    case spam, harassment, other
    case inappropriateProfile = "inappropriate_profile"
    case inappropriatePhoto = "inappropriate_photo"
}

/// `user_reported`: `reporter` reported `reported`, on the reported user's stream. The note is
/// the reporter's own words: personal data of the reporter.
public struct UserReported: Sendable, Equatable, Codable {
    public var reportID: UUID
    public var reporter: UUID
    public var reported: UUID
    public var reason: ReportReason
    /// The walk the report is about, if any (its message is the evidence).
    public var walkID: UUID?
    /// The chat message the report is about, if any (absent in reports filed before messages
    /// could be named, so decoded as nil).
    public var messageID: UUID?
    public var note: String?
    public var at: Date

    public init(
        reportID: UUID,
        reporter: UUID,
        reported: UUID,
        reason: ReportReason,
        walkID: UUID?,
        messageID: UUID? = nil,
        note: String?,
        at: Date
    ) {
        self.reportID = reportID
        self.reporter = reporter
        self.reported = reported
        self.reason = reason
        self.walkID = walkID
        self.messageID = messageID
        self.note = note
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case reportID = "report_id"
        case walkID = "walk_id"
        case messageID = "message_id"
        case reporter, reported, reason, note, at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesClear {
            try c.encode(reportID.lowercasedString, forKey: .reportID)
            try c.encode(reporter.lowercasedString, forKey: .reporter)
            try c.encode(reported.lowercasedString, forKey: .reported)
            try c.encode(reason, forKey: .reason)
            try c.encode(walkID?.lowercasedString, forKey: .walkID)
            // Only when present, so that the events of reports without one keep their JSON.
            try c.encodeIfPresent(messageID?.lowercasedString, forKey: .messageID)
            try c.encode(at, forKey: .at)
        }
        if part.writesPersonal, let note { try c.encode(note, forKey: .note) }
    }
}

/// `report_resolved`: an operator dealt with the report.
public struct ReportResolved: Sendable, Equatable, Codable {
    public var reportID: UUID
    /// The reported user (whose stream holds the report).
    public var reported: UUID
    public var at: Date
    /// Who resolved it; nil in events written before operators had names (read as `admin`).
    public var `operator`: String?

    public init(reportID: UUID, reported: UUID, at: Date, operator: String? = nil) {
        self.reportID = reportID
        self.reported = reported
        self.at = at
        self.operator = `operator`
    }

    enum CodingKeys: String, CodingKey {
        case reportID = "report_id"
        case reported, at
        case `operator` = "operator"
    }

    /// The operator who acted: `admin` for events older than operator accounts.
    public var operatorName: String { self.operator ?? OperatorNames.admin }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(reportID.lowercasedString, forKey: .reportID)
        try c.encode(reported.lowercasedString, forKey: .reported)
        try c.encode(at, forKey: .at)
        try c.encodeIfPresent(self.operator, forKey: .operator)
    }
}

/// `user_suspended`: an operator suspended the account. The reason speaks of the user, so it is
/// their personal data (erased with their account).
public struct UserSuspended: Sendable, Equatable, Codable {
    public var userID: UUID
    public var reason: String
    public var at: Date
    /// Who suspended; nil in events written before operators had names (read as `admin`).
    public var `operator`: String?

    public init(userID: UUID, reason: String, at: Date, operator: String? = nil) {
        self.userID = userID
        self.reason = reason
        self.at = at
        self.operator = `operator`
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case reason, at
        case `operator` = "operator"
    }

    /// The operator who acted: `admin` for events older than operator accounts.
    public var operatorName: String { self.operator ?? OperatorNames.admin }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesClear {
            try c.encode(userID.lowercasedString, forKey: .userID)
            try c.encode(at, forKey: .at)
            // The operator's name is the operator's, not the user's: clear.
            try c.encodeIfPresent(self.operator, forKey: .operator)
        }
        if part.writesPersonal { try c.encode(reason, forKey: .reason) }
    }
}

/// `user_unsuspended`: an operator lifted the suspension.
public struct UserUnsuspended: Sendable, Equatable, Codable {
    public var userID: UUID
    public var at: Date
    /// Who lifted it; nil in events written before operators had names (read as `admin`).
    public var `operator`: String?

    public init(userID: UUID, at: Date, operator: String? = nil) {
        self.userID = userID
        self.at = at
        self.operator = `operator`
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case at
        case `operator` = "operator"
    }

    /// The operator who acted: `admin` for events older than operator accounts.
    public var operatorName: String { self.operator ?? OperatorNames.admin }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userID.lowercasedString, forKey: .userID)
        try c.encode(at, forKey: .at)
        try c.encodeIfPresent(self.operator, forKey: .operator)
    }
}

/// Operators' names as events record them.
public enum OperatorNames {
    /// The holder of `SNIFFMEET_ADMIN_TOKEN`, and the operator of every action recorded before
    /// operators had accounts.
    public static let admin = "admin"
}
