import Foundation
import XCTest

final class UserRoutesTests: XCTestCase {
    func testSignUpUpdateDeviceTokenAndDropToken() async throws {
        try await GatewayFixture("users").run { client in
            let signUp = try await client.send(
                .post,
                "/v1/users",
                json: """
                    {"nickname": "Mia", "dog_name": "Bori", "age": 3, "sex": "female", "neutered": true,
                     "size": "small", "keywords": ["smart", "shy"]}
                    """
            )
            XCTAssertEqual(signUp.status, 201, signUp.text)
            XCTAssertNotNil(signUp.header("Log-Position"))
            let token = try XCTUnwrap(signUp.json["token"] as? String)
            XCTAssertEqual(token.count, 43)
            let profile = try XCTUnwrap(signUp.json["profile"] as? [String: Any])
            XCTAssertEqual(profile["nickname"] as? String, "Mia")
            XCTAssertEqual(profile["dog_name"] as? String, "Bori")
            XCTAssertEqual(profile["keywords"] as? [String], ["smart", "shy"])
            XCTAssertTrue(profile["profile_image"] is NSNull)
            XCTAssertEqual(profile["user_id"] as? String, signUp.json["user_id"] as? String)
            XCTAssertNotNil(profile["created_at"] as? String)
            // The token is stored only as its SHA-256.
            let stored = try client.sql("SELECT encode(token_hash, 'hex') FROM sessions")
            XCTAssertEqual(stored.count, 1)
            XCTAssertNotEqual(stored[0][0], token)
            XCTAssertEqual(stored[0][0]?.count, 64)

            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/users",
                    json: """
                        {"nickname": "MIA", "dog_name": "Other", "age": 1, "sex": "male", "neutered": false, "size": "large", "keywords": ["energetic"]}
                        """
                ),
                409,
                "nickname_taken"
            )

            XCTAssertError(
                try await client.send(.patch, "/v1/me", token: token, json: #"{"dog_name": "Choco", "profile_image": "choco.png"}"#),
                400,
                "validation_failed",
                field: "profile_image"
            )
            let patch = try await client.send(.patch, "/v1/me", token: token, json: #"{"dog_name": "Choco", "age": 4}"#)
            XCTAssertEqual(patch.status, 200, patch.text)
            XCTAssertEqual(patch.json["dog_name"] as? String, "Choco")
            XCTAssertTrue(patch.json["profile_image"] is NSNull, patch.text)
            XCTAssertEqual(patch.json["sex"] as? String, "female")
            XCTAssertNotNil(patch.header("Log-Position"))
            let removeImage = try await client.send(.patch, "/v1/me", token: token, json: #"{"profile_image": null}"#)
            XCTAssertTrue(removeImage.json["profile_image"] is NSNull, removeImage.text)
            XCTAssertError(
                try await client.send(.patch, "/v1/me", token: token, json: #"{"age": 120}"#),
                400,
                "validation_failed",
                field: "age"
            )
            XCTAssertError(
                try await client.send(.patch, "/v1/me", token: token, json: #"{"sex": "male"}"#),
                400,
                "validation_failed",
                field: "sex"
            )

            let device = try await client.send(
                .put,
                "/v1/me/device-token",
                token: token,
                json: #"{"device_token": "\#(String(repeating: "abcdef0123", count: 7))", "locale": "en"}"#
            )
            XCTAssertEqual(device.status, 204, device.text)
            XCTAssertNil(device.header("Log-Position"), "device tokens belong to sessions, outside the log")
            XCTAssertError(
                try await client.send(.put, "/v1/me/device-token", token: token, json: #"{"device_token": "not hex!"}"#),
                400,
                "validation_failed",
                field: "device_token"
            )
            XCTAssertError(
                try await client.send(.put, "/v1/me/device-token", token: token, json: #"{"device_token": "abcdef0123"}"#),
                400,
                "validation_failed",
                field: "device_token"
            )
            XCTAssertError(
                try await client.send(
                    .put,
                    "/v1/me/device-token",
                    token: token,
                    json: #"{"device_token": "\#(String(repeating: "ab", count: 32))", "locale": "fr"}"#
                ),
                400,
                "validation_failed",
                field: "locale"
            )
            XCTAssertError(
                try await client.send(.put, "/v1/me/device-token", token: token, json: #"{}"#),
                400,
                "validation_failed",
                field: "device_token"
            )

            let drop = try await client.send(.post, "/v1/me/drop-tokens", token: token)
            XCTAssertEqual(drop.status, 201, drop.text)
            XCTAssertNotNil(drop.json["drop_token"] as? String)
            XCTAssertNotNil(drop.json["expires_at"] as? String)
        }
    }
}
