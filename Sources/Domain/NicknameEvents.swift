import Foundation
import UUIDText

/// Payload of `nickname_reserved` and `nickname_released` on the `nickname-<lowercased>` stream.
public struct NicknameClaim: Sendable, Equatable, Codable {
    /// The nickname in lowercase, as in the stream name.
    public var nickname: String
    /// The user who reserves or releases it.
    public var userID: UUID
    public var at: Date

    public init(nickname: String, userID: UUID, at: Date) {
        self.nickname = nickname
        self.userID = userID
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case nickname
        case userID = "user_id"
        case at
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let part = EventPart(encoder)
        if part.writesPersonal { try c.encode(nickname, forKey: .nickname) }
        if part.writesClear {
            try c.encode(userID.lowercasedString, forKey: .userID)
            try c.encode(at, forKey: .at)
        }
    }
}
