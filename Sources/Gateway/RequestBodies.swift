import Domain
import Foundation
import JSONText
import UUIDText

// The JSON bodies clients send. Enumerations are read as strings and checked here, so that a
// wrong value is `validation_failed` naming its field rather than a decoding failure.

/// A body the hot commands send, with a quick reading of its plain form (`FlatJSONObject`);
/// `init(flat:)` returns nil for anything it does not read, and `JSONDecoder` decides then.
protocol FlatDecodable: Decodable {
    init?(flat: FlatJSONObject)
}

/// `POST /v1/users`.
struct SignUpBody: Decodable, Equatable {
    var nickname: String
    var dogName: String
    var age: Int
    var sex: String
    var neutered: Bool
    var size: String
    var keywords: [String]
    var profileImage: String?

    enum CodingKeys: String, CodingKey {
        case nickname
        case dogName = "dog_name"
        case age, sex, neutered, size, keywords
        case profileImage = "profile_image"
    }

    func profile() throws -> DogProfile {
        guard let sex = Sex(rawValue: sex) else { throw APIError.validation("sex", "sex must be male or female") }
        // Checked here too, so that a bad profile costs no database work.
        return try DogProfile(
            nickname: nickname,
            dogName: dogName,
            age: age,
            sex: sex,
            neutered: neutered,
            size: try parseSize(size),
            keywords: try parseKeywords(keywords),
            profileImage: profileImage
        ).validated()
    }
}

/// `PATCH /v1/me`: every field optional; `profile_image: null` removes the picture.
struct ProfileChangesBody: Decodable {
    var changes = ProfileChanges()

    enum CodingKeys: String, CodingKey {
        case nickname
        case dogName = "dog_name"
        case age, neutered, size, keywords
        case profileImage = "profile_image"
        case sex
    }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if c.contains(.sex) { throw APIError.validation("sex", "sex cannot be changed") }
        // null only means something for the picture (remove it); elsewhere it is a mistake.
        for key in [CodingKeys.nickname, .dogName, .age, .neutered, .size, .keywords] where c.contains(key) {
            if try c.decodeNil(forKey: key) { throw APIError.validation(key.rawValue, "\(key.rawValue) must not be null") }
        }
        changes.nickname = try c.decodeIfPresent(String.self, forKey: .nickname)
        changes.dogName = try c.decodeIfPresent(String.self, forKey: .dogName)
        changes.age = try c.decodeIfPresent(Int.self, forKey: .age)
        changes.neutered = try c.decodeIfPresent(Bool.self, forKey: .neutered)
        changes.size = try c.decodeIfPresent(String.self, forKey: .size).map(parseSize)
        changes.keywords = try c.decodeIfPresent([String].self, forKey: .keywords).map(parseKeywords)
        if c.contains(.profileImage) {
            changes.profileImage = .some(try c.decodeNil(forKey: .profileImage) ? nil : c.decode(String.self, forKey: .profileImage))
        }
        changes = try changes.validated()
    }
}

/// `PUT /v1/me/device-token`.
struct DeviceTokenBody: Decodable {
    var deviceToken: String
    /// `ko` (default) or `en`: the language of pushes to this device.
    var locale: String?
    enum CodingKeys: String, CodingKey {
        case deviceToken = "device_token"
        case locale
    }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        deviceToken = try c.decode(String.self, forKey: .deviceToken)
        // Absent means `ko`; null is not a locale.
        locale = c.contains(.locale) ? try c.decode(String.self, forKey: .locale) : nil
    }

    /// The registration, checked by the domain's rule.
    func registration() throws -> DeviceRegistration {
        do { return try DeviceRegistration(token: deviceToken, locale: locale) } catch { throw error.apiError }
    }
}

/// `POST /v1/sessions`.
struct TransferCodeBody: Decodable {
    var transferCode: String
    enum CodingKeys: String, CodingKey {
        case transferCode = "transfer_code"
    }
}

/// `POST /v1/mate-requests`.
struct MateRequestBody: Decodable, Equatable {
    var to: String
    var dropToken: String
    enum CodingKeys: String, CodingKey {
        case to
        case dropToken = "drop_token"
    }

    func addressee() throws -> UUID {
        guard let id = UUID(text: to) else { throw APIError.validation("to", "to must be a user id") }
        return id
    }
}

/// `POST /v1/walks`.
struct WalkBody: Decodable, Equatable {
    var to: String
    var message: String
    var latitude: Double
    var longitude: Double
    var placeName: String?
    enum CodingKeys: String, CodingKey {
        case to, message, latitude, longitude
        case placeName = "place_name"
    }

    func addressee() throws -> UUID {
        guard let id = UUID(text: to) else { throw APIError.validation("to", "to must be a user id") }
        return id
    }
}

/// `POST /v1/walks/{id}/response`.
struct WalkAnswerBody: Decodable, Equatable {
    var answer: String

    func parsed() throws -> WalkAnswer {
        guard let answer = WalkAnswer(rawValue: answer) else { throw APIError.validation("answer", "answer must be accept or decline") }
        return answer
    }
}

private func parseSize(_ text: String) throws -> Size {
    guard let size = Size(rawValue: text) else { throw APIError.validation("size", "size must be small, medium or large") }
    return size
}

private func parseKeywords(_ texts: [String]) throws -> [Keyword] {
    try texts.map { text in
        guard let keyword = Keyword(rawValue: text) else {
            throw APIError.validation("keywords", "keywords must be among energetic, smart, friendly, shy, independent")
        }
        return keyword
    }
}

/// `POST /v1/reports`.
struct ReportBody: Decodable {
    var userID: String
    var reason: String
    var walkID: String?
    var note: String?
    var messageID: String?
    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case walkID = "walk_id"
        case reason, note
        case messageID = "message_id"
    }

    func reportedMessage() throws -> UUID? {
        guard let messageID else { return nil }
        guard let id = UUID(text: messageID) else { throw APIError.validation("message_id", "message_id must be a message id") }
        return id
    }

    func reportedUser() throws -> UUID {
        guard let id = UUID(text: userID) else { throw APIError.validation("user_id", "user_id must be a user id") }
        return id
    }

    func reportReason() throws -> ReportReason {
        guard let reason = ReportReason(rawValue: reason) else {
            throw APIError.validation("reason", "reason must be one of \(ReportReason.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return reason
    }

    func reportedWalk() throws -> UUID? {
        guard let walkID else { return nil }
        guard let id = UUID(text: walkID) else { throw APIError.validation("walk_id", "walk_id must be a walk id") }
        return id
    }
}

/// `POST /v1/admin/users/{id}/suspend`.
struct SuspensionBody: Decodable {
    var reason: String
}

extension SignUpBody: FlatDecodable {
    init?(flat: FlatJSONObject) {
        guard let nickname = flat.string("nickname"), let dogName = flat.string("dog_name"), let age = flat.int("age"),
            let sex = flat.string("sex"), let neutered = flat.bool("neutered"), let size = flat.string("size"),
            let keywords = flat.strings("keywords"), let profileImage = flat.optionalString("profile_image")
        else { return nil }
        self.init(
            nickname: nickname,
            dogName: dogName,
            age: age,
            sex: sex,
            neutered: neutered,
            size: size,
            keywords: keywords,
            profileImage: profileImage
        )
    }
}

extension MateRequestBody: FlatDecodable {
    init?(flat: FlatJSONObject) {
        guard let to = flat.string("to"), let dropToken = flat.string("drop_token") else { return nil }
        self.init(to: to, dropToken: dropToken)
    }
}

extension WalkBody: FlatDecodable {
    init?(flat: FlatJSONObject) {
        guard let to = flat.string("to"), let message = flat.string("message"), let latitude = flat.double("latitude"),
            let longitude = flat.double("longitude"), let placeName = flat.optionalString("place_name")
        else { return nil }
        self.init(to: to, message: message, latitude: latitude, longitude: longitude, placeName: placeName)
    }
}

extension WalkAnswerBody: FlatDecodable {
    init?(flat: FlatJSONObject) {
        guard let answer = flat.string("answer") else { return nil }
        self.init(answer: answer)
    }
}
