import Foundation
import Postgres

/// Everything an account has a part in that its deletion must settle: the users it is mates
/// with or has a pending mate request with, and its pending walks, either way.
public struct AccountTies: Sendable, Equatable {
    public var partners: [UUID]
    public var walks: [UUID]
}

/// The query of `DELETE /v1/me` over the `mates`, `mate_requests` and `walks` read models.
public enum AccountTiesQueries {
    static let tiesSQL = """
        SELECT 'p', mate_id FROM mates WHERE user_id = $1
        UNION SELECT 'p', CASE WHEN from_user = $1 THEN to_user ELSE from_user END FROM mate_requests
            WHERE (from_user = $1 OR to_user = $1) AND status = 'pending'
        UNION SELECT 'w', walk_id FROM walks WHERE (from_user = $1 OR to_user = $1) AND status = 'pending'
        """

    /// The ties of `user` as the read models hold them (wait for them to reach the log's head first).
    public static func ties(of user: UUID) -> Query<AccountTies> {
        Query(tiesSQL, [user]) { result in
            var ties = AccountTies(partners: [], walks: [])
            for row in result.rows {
                if try row.string(0) == "p" { ties.partners.append(try row.uuid(1)) } else { ties.walks.append(try row.uuid(1)) }
            }
            return ties
        }
    }
}
