import Commands
import Foundation
import Gateway
import XCTest

/// The OpenAPI document and the router must describe the same (method, path) set.
final class OpenAPIDriftTests: XCTestCase {
    func testRouterAndDocumentAgree() async throws {
        let fixture = try GatewayFixture("drift")
        let services = GatewayServices(configuration: fixture.configuration,
                                       pool: .init(connectionString: fixture.configuration.databaseURL),
                                       log: .init(pool: .init(connectionString: fixture.configuration.databaseURL)))
        _ = buildRouter(services, handler: .init(log: services.log))
        let served = Set(services.routes.routes)
        let documented = Set(try OpenAPIDocument.operations())
        XCTAssertFalse(served.isEmpty)
        XCTAssertEqual(served.subtracting(documented).sorted(), [], "routes missing from openapi.json")
        XCTAssertEqual(documented.subtracting(served).sorted(), [], "documented operations the router does not serve")
    }
}
