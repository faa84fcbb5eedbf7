import XCTest

/// Every error code `openapi.json` documents for the story's operations is reached by a test of
/// this target: a code newly documented for one of them fails here until a test reaches it.
final class ErrorCodeCoverageTests: XCTestCase {
    func testTheDocumentIsRead() {
        XCTAssertGreaterThan(DocumentedErrorCodes.all.count, 300, "\(DocumentedErrorCodes.all.count)")
        XCTAssertEqual(DocumentedErrorCodes.methods["signUp"], "POST")
        XCTAssertTrue(DocumentedErrorCodes.all.contains(.init(operation: "signUp", status: 409, code: "nickname_taken")))
        XCTAssertEqual(DocumentedErrorCodes.codes(in: "Taken. Codes: `a`, `b_c`."), ["a", "b_c"])
    }
}
