import Domain
import Foundation
import PersonalData
import Postgres

/// `profiles`: each user's current dog profile, and its card rendered once (`profile_card()`,
/// schema 0008) for the list pages. Both profile events carry the whole profile, so a batch
/// folds to one final row per user: inserted if registered in the batch, else updated.
/// `suspended` follows the user's suspension (a suspended user's card is 404 to everyone).
public struct ProfilesProjector: Projector {
    public init() {}
    public var name: String { "profiles" }
    public var tables: [String] { ["profiles"] }

    struct Row {
        var profile: DogProfile
        /// Set when the user registered in this batch (the row is new).
        var createdAt: Date?
        var updatedAt: Date
    }

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        try DeletedAccounts.remove(events, from: tables("profiles"), naming: ["user_id"], on: connection)
        var rows: [UUID: Row] = [:]
        var order: [UUID] = []
        var suspended: [UUID: Bool] = [:]
        for event in events {
            switch event.event {
            case .userSuspended(let e):
                suspended[e.userID] = true
            case .userUnsuspended(let e):
                suspended[e.userID] = false
            case .userRegistered(let e):
                if rows[e.userID] == nil { order.append(e.userID) }
                rows[e.userID] = Row(profile: e.profile, createdAt: e.registeredAt, updatedAt: e.registeredAt)
            case .profileUpdated(let e):
                if var row = rows[e.userID] {
                    row.profile = e.profile
                    row.updatedAt = e.updatedAt
                    rows[e.userID] = row
                } else {
                    order.append(e.userID)
                    rows[e.userID] = Row(profile: e.profile, createdAt: nil, updatedAt: e.updatedAt)
                }
            default:
                continue
            }
        }
        let inserted = order.filter { rows[$0]!.createdAt != nil }
        let updated = order.filter { rows[$0]!.createdAt == nil }
        func columns(_ ids: [UUID]) -> [any PostgresEncodable] {
            let r = ids.map { rows[$0]! }
            return [
                ids, r.map(\.profile.nickname), r.map(\.profile.dogName), r.map(\.profile.age),
                r.map(\.profile.sex.rawValue), r.map(\.profile.neutered), r.map(\.profile.size.rawValue),
                r.map { $0.profile.keywords.map(\.rawValue).postgresText! }, r.map(\.profile.profileImage),
                r.map(\.createdAt), r.map(\.updatedAt),
            ]
        }
        let unnest = """
            unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::text[], $6::bool[], $7::text[], $8::text[], $9::text[],
                   $10::timestamptz[], $11::timestamptz[]) AS x(user_id, nickname, dog_name, age, sex, neutered, size, keywords,
                   profile_image, created_at, updated_at)
            """
        if !inserted.isEmpty {
            try connection.execute(
                """
                INSERT INTO \(tables("profiles")) (user_id, nickname, dog_name, age, sex, neutered, size, keywords, profile_image,
                                                   created_at, updated_at, card)
                SELECT user_id, nickname, dog_name, age, sex, neutered, size, keywords::text[], profile_image, created_at, updated_at,
                       \(Self.card("x"))
                FROM \(unnest)
                """,
                columns(inserted)
            )
        }
        if !updated.isEmpty {
            try connection.execute(
                """
                UPDATE \(tables("profiles")) AS p SET nickname = x.nickname, dog_name = x.dog_name, age = x.age, sex = x.sex,
                    neutered = x.neutered, size = x.size, keywords = x.keywords::text[], profile_image = x.profile_image,
                    updated_at = x.updated_at, card = \(Self.card("x"))
                FROM \(unnest)
                WHERE p.user_id = x.user_id
                """,
                columns(updated)
            )
        }
        if !suspended.isEmpty {
            let users = Array(suspended.keys)
            try connection.execute(
                """
                UPDATE \(tables("profiles")) AS p SET suspended = x.suspended
                FROM unnest($1::uuid[], $2::bool[]) AS x(user_id, suspended) WHERE p.user_id = x.user_id
                """,
                [users, users.map { suspended[$0]! }]
            )
        }
    }

    /// The card of the profile in the row aliased `alias` (the in-SQL rebuild renders it the same way).
    public static func card(_ alias: String) -> String {
        "profile_card(\(alias).user_id, \(alias).nickname, \(alias).dog_name, \(alias).age, \(alias).sex, \(alias).neutered, "
            + "\(alias).size, \(alias).keywords::text[], \(alias).profile_image)"
    }
}
