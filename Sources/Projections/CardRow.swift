import Foundation
import Postgres

/// A user's dog card as the `profiles` read model stores it: the card object of API.md as
/// JSON text, rendered once by the projector (`profile_card()`). Mates, mate requests and walks
/// join it for the cards they show and copy it into their answers as it is.
public struct CardRow: Sendable, Equatable {
    public var userID: UUID
    /// The card object, `{"user_id":…,"profile_image":…}`, UTF-8.
    public var json: [UInt8]

    public init(userID: UUID, json: [UInt8]) {
        self.userID = userID
        self.json = json
    }

    /// The SELECT list of a card from `profiles` aliased `alias`, in the order `init(_:)` reads.
    static func columns(_ alias: String) -> String { "\(alias).user_id, \(alias).card" }

    /// Reads the columns of `columns(_:)` from where `reader` stands.
    init(_ reader: inout RowReader) throws {
        userID = try reader.uuid()
        // Written by the projector as a whole object; anything else is a damaged row.
        guard let json = reader.withBytes({ Array($0) }), json.first == UInt8(ascii: "{"), json.last == UInt8(ascii: "}") else {
            throw PostgresError.decoding(column: "card", value: nil, as: "card JSON object")
        }
        self.json = json
    }
}
