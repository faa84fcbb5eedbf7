import Foundation
import XCTest

@testable import Domain

/// Error codes are part of the API contract.
final class DomainErrorTests: XCTestCase {
    func testErrorCodesAreTheStableAPICodes() {
        let errors: [DomainError] = [
            .validationFailed(field: "age", reason: "r"), .nicknameTaken, .alreadyMates, .cannotRequestSelf, .invalidDropToken,
            .dropTokenExpired, .notAddressee, .notRequester, .notPending, .notMates, .alreadyAnswered, .walkExpired,
            .notSender, .notFound, .userNotFound, .alreadyExists,
        ]
        XCTAssertEqual(
            errors.map(\.code),
            [
                "validation_failed", "nickname_taken", "already_mates", "cannot_request_self", "invalid_drop_token",
                "drop_token_expired", "not_addressee", "not_requester", "not_pending", "not_mates", "already_answered", "walk_expired",
                "not_sender", "not_found", "user_not_found", "already_exists",
            ]
        )
        XCTAssertEqual(errors.map(\.field), ["age"] + Array(repeating: nil, count: 15))
        XCTAssertTrue(errors.allSatisfy { !$0.message.isEmpty })
    }
}
