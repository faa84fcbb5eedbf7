import Domain
import Foundation
import Postgres

/// Deleted accounts in the read models: every row that names a deleted user goes, in every read
/// model, with the batch that holds their `user_deleted`. Nothing later brings one back:
/// `ProjectedEvent.decode` passes over every event that names a user erased by then.
extension Array where Element == ProjectedEvent {
    /// The users whose `user_deleted` is in this batch.
    var deletedUsers: [UUID] {
        compactMap { if case .userDeleted(let e) = $0.event { e.userID } else { nil } }
    }
}

enum DeletedAccounts {
    /// Deletes the rows of `table` (a physical name) where any of `columns` names one of the
    /// batch's deleted users.
    static func remove(_ events: [ProjectedEvent], from table: String, naming columns: [String], on connection: Connection) throws {
        let deleted = events.deletedUsers
        guard !deleted.isEmpty else { return }
        let condition = columns.map { "\($0) = ANY($1::uuid[])" }.joined(separator: " OR ")
        try connection.execute("DELETE FROM \(table) WHERE \(condition)", [deleted])
    }
}
