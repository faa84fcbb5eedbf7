import Foundation
import Postgres

/// The queries of the `profiles` read model. Each statement is a static constant, built once
/// and prepared per connection.
public enum ProfilesQueries {
    static let profileSQL = "SELECT \(ProfileRow.columns("p")) FROM profiles p WHERE p.user_id = $1"

    /// The profile of `user`, if registered.
    public static func profile(of user: UUID) -> Query<ProfileRow?> {
        Query(profileSQL, [user]) { result in
            guard let row = result.first else { return nil }
            var reader = RowReader(row)
            return try ProfileRow(&reader)
        }
    }

    static let visibleSQL = """
        SELECT \(CardRow.columns("p")) FROM profiles p
        WHERE p.user_id = $1 AND ($1 = $2 OR (NOT p.suspended
        AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = $1 AND b.blocked = $2)))
        AND (
            $1 = $2
            OR EXISTS (SELECT 1 FROM mates m WHERE m.user_id = $2 AND m.mate_id = $1)
            OR EXISTS (SELECT 1 FROM mate_requests r WHERE (r.from_user = $1 AND r.to_user = $2) OR (r.from_user = $2 AND r.to_user = $1))
            OR EXISTS (SELECT 1 FROM walks w WHERE (w.from_user = $1 AND w.to_user = $2) OR (w.from_user = $2 AND w.to_user = $1)))
        """

    /// The card of `other` if `viewer` may see it: themselves, a mate, or someone with a mate
    /// request or a walk between the two, unless `other` is suspended or blocked `viewer`.
    /// Anyone else is indistinguishable from nobody.
    public static func card(of other: UUID, seenBy viewer: UUID) -> Query<CardRow?> {
        Query(visibleSQL, [other, viewer]) { result in
            guard let row = result.first else { return nil }
            var reader = RowReader(row)
            return try CardRow(&reader)
        }
    }
}
