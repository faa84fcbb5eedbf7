import Commands
import Foundation
import Gateway
import PostgresTesting
import XCTest

/// The OpenAPI document and the router must describe the same (method, path) set.
final class OpenAPIDriftTests: XCTestCase {
    func testRouterAndDocumentAgree() async throws {
        let fixture = try GatewayFixture("drift")
        let services = GatewayServices(
            configuration: fixture.configuration,
            pool: .init(connectionString: fixture.configuration.databaseURL),
            log: .init(pool: .init(connectionString: fixture.configuration.databaseURL))
        )
        // Hummingbird's own route list; its paths print parameters as `{name}`, as OpenAPI does.
        let router = buildRouter(services, handler: .init(log: services.log, sealer: TestDatabase.sealer))
        let served = Set(router.routes.map { OpenAPIDocument.Operation(method: $0.method.rawValue, path: $0.path.description) })
        let documented = Set(try OpenAPIDocument.operations())
        XCTAssertFalse(served.isEmpty)
        XCTAssertEqual(served.subtracting(documented).sorted(), [], "routes missing from openapi.json")
        XCTAssertEqual(documented.subtracting(served).sorted(), [], "documented operations the router does not serve")
    }
}
