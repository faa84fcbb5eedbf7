import Domain
import Foundation
import JSONText
import Projections

/// An entry of `GET /v1/me/blocks`.
public struct BlockJSON: JSONObjectWritable, Sendable {
    var row: BlockRow

    init(_ row: BlockRow) { self.row = row }

    public func writeMembers(_ object: inout JSONObjectWriter) {
        object.id("user_id", row.userID)
        object.string("dog_name", row.dogName)
        object.string("nickname", row.nickname)
        object.timestamp("blocked_at", row.blockedAt)
    }
}

/// A report as operators see it (`GET /v1/admin/reports`, `POST /v1/admin/reports/{id}/resolve`).
public struct ReportJSON: JSONObjectWritable, Sendable {
    var row: ReportRow

    init(_ row: ReportRow) { self.row = row }

    public func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("report_id", row.reportID)
        try object.object("reporter", CardJSON(row.reporter))
        try object.object("reported", CardJSON(row.reported))
        object.string("reason", row.reason)
        object.string("note", row.note)
        object.id("walk_id", row.walkID)
        object.string("walk_message", row.walkMessage)
        object.id("message_id", row.messageID)
        object.string("message_text", row.messageText)
        object.string("status", row.status)
        object.timestamp("created_at", row.createdAt)
        object.timestamp("resolved_at", row.resolvedAt)
    }
}

/// The answer of `POST /v1/reports`.
struct ReportFiledJSON: JSONObjectWritable {
    var reportID: UUID

    func writeMembers(_ object: inout JSONObjectWriter) {
        object.id("report_id", reportID)
    }
}

/// `GET /v1/nicknames/{nickname}`.
struct NicknameAvailabilityJSON: JSONObjectWritable {
    var nickname: String
    var available: Bool

    func writeMembers(_ object: inout JSONObjectWriter) {
        object.string("nickname", nickname)
        object.bool("available", available)
    }
}
