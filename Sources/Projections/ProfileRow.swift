import Domain
import Foundation
import Postgres

/// A row of `profiles`: a user's dog card and when they registered. Mates, mate requests and
/// walks join it for the cards they show.
public struct ProfileRow: Sendable, Equatable {
    public var userID: UUID
    public var profile: DogProfile
    public var createdAt: Date

    public init(userID: UUID, profile: DogProfile, createdAt: Date) {
        self.userID = userID
        self.profile = profile
        self.createdAt = createdAt
    }

    /// The SELECT list of a profile from `profiles` aliased `alias`, in the order `init(_:)` reads.
    static func columns(_ alias: String) -> String {
        "\(alias).user_id, \(alias).nickname, \(alias).dog_name, \(alias).age, \(alias).sex, \(alias).neutered, "
            + "\(alias).size, array_to_string(\(alias).keywords, ','), \(alias).profile_image, \(alias).created_at"
    }

    /// Reads the columns of `columns(_:)` from where `reader` stands.
    init(_ reader: inout RowReader) throws {
        userID = try reader.uuid()
        let nickname = try reader.string()
        let dogName = try reader.string()
        let age = try reader.int()
        let sex = Sex(rawValue: try reader.string())
        let neutered = try reader.bool()
        let size = Size(rawValue: try reader.string())
        // Keywords are enum words (no commas), so a joined string is cheaper than a JSON array per row.
        guard
            let keywords = reader.withBytes({ text in
                text.split(separator: UInt8(ascii: ",")).compactMap { Keyword(rawValue: String(decoding: $0, as: UTF8.self)) }
            })
        else { throw PostgresError.decoding(column: "keywords", value: nil, as: "[Keyword]") }
        guard let sex, let size else { throw PostgresError.decoding(column: "sex/size", value: nil, as: "enum") }
        profile = DogProfile(
            nickname: nickname,
            dogName: dogName,
            age: age,
            sex: sex,
            neutered: neutered,
            size: size,
            keywords: keywords,
            profileImage: reader.optionalString()
        )
        createdAt = try reader.date()
    }
}
