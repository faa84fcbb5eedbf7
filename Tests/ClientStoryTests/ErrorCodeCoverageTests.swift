import XCTest

/// Every error code `openapi.json` documents for the story's operations is reached by a test of
/// this target: a code newly documented for one of them fails here until a test reaches it (or
/// it is shown below to be out of a test's reach, with the reason).
final class ErrorCodeCoverageTests: XCTestCase {
    /// Documented, and produced by the server, but out of a test's reach, each with the reason.
    /// None today (two deletions racing from two sessions were the last); a pair listed here
    /// that a test reaches fails.
    static let outOfReach: [String] = []

    /// (operation, code) pairs the tests of this target reach.
    static var reached: Set<String> {
        var reached = Set(ClientStoryTests.errorCodesOfTheStory).union(ClientErrorCodesTests.all)
        for (code, except) in ClientSharedErrorCodesTests.swept {
            for pair in DocumentedErrorCodes.of(StoryOperations.operations) where pair.code == code && !except.contains(pair.operation) {
                reached.insert("\(pair.operation) \(code)")
            }
        }
        return reached
    }

    func testEveryDocumentedCodeOfTheStorysOperationsIsReached() {
        let documented = Set(DocumentedErrorCodes.of(StoryOperations.operations).map { "\($0.operation) \($0.code)" })
        let covered = Self.reached.union(Self.outOfReach)
        XCTAssertEqual(documented.subtracting(covered).sorted(), [], "documented, reached by no test")
        XCTAssertEqual(covered.subtracting(documented).sorted(), [], "reached or listed, but not documented")
        XCTAssertTrue(Set(Self.outOfReach).isDisjoint(with: Self.reached), "reached after all: \(Self.outOfReach)")
    }

    /// The story's operations are the document's, and the story test only reaches codes of them.
    func testTheStorysOperationsAreDocumented() {
        let documented = Set(DocumentedErrorCodes.methods.keys)
        XCTAssertEqual(Set(StoryOperations.operations).subtracting(documented).sorted(), [])
        XCTAssertEqual(StoryOperations.operations.count, Set(StoryOperations.operations).count, "each once")
        let storyOperations = Set(ClientStoryTests.errorCodesOfTheStory.map { String($0.split(separator: " ")[0]) })
        XCTAssertEqual(storyOperations.subtracting(StoryOperations.operations).sorted(), [])
    }

    func testTheDocumentIsRead() {
        XCTAssertGreaterThan(DocumentedErrorCodes.all.count, 300, "\(DocumentedErrorCodes.all.count)")
        XCTAssertEqual(DocumentedErrorCodes.methods["signUp"], "POST")
        XCTAssertTrue(DocumentedErrorCodes.all.contains(.init(operation: "signUp", status: 409, code: "nickname_taken")))
        XCTAssertEqual(DocumentedErrorCodes.codes(in: "Taken. Codes: `a`, `b_c`."), ["a", "b_c"])
        XCTAssertEqual(DocumentedErrorCodes.codes(in: "No codes here."), [])
    }
}
