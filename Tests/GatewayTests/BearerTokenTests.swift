import HTTPTypes
import Hummingbird
import XCTest

@testable import Gateway

/// `Authorization` headers as clients send them: the scheme in any case, extra blanks around the
/// token; anything else is no token at all (and so `401`).
final class BearerTokenTests: XCTestCase {
    func token(_ header: String?) -> String? {
        var fields = HTTPFields()
        if let header { fields[.authorization] = header }
        let head = HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/v1/me", headerFields: fields)
        return Authenticator.bearerToken(Request(head: head, body: .init(buffer: ByteBuffer())))
    }

    func testBearerTokensAreFound() {
        XCTAssertEqual(token("Bearer abc123"), "abc123")
        XCTAssertEqual(token("bearer abc123"), "abc123")
        XCTAssertEqual(token("BEARER   abc123 \t "), "abc123")
        XCTAssertEqual(token("  Bearer \tabc-_123"), "abc-_123")
    }

    func testAnythingElseIsNoToken() {
        XCTAssertNil(token(nil))
        XCTAssertNil(token(""))
        XCTAssertNil(token("Bearer"))
        XCTAssertNil(token("Bearer    "))
        XCTAssertNil(token("Bearerabc123"))
        XCTAssertNil(token("Basic YWxhZGRpbjpvcGVuc2VzYW1l"))
        XCTAssertNil(token("Bearen abc123"))
        XCTAssertNil(token("Bear abc123"))
    }
}
