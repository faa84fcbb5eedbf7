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
        let routes = Set(router.routes.map { OpenAPIDocument.Operation(method: $0.method.rawValue, path: $0.path.description) })
        // The console's HTML pages are for browsers, not the JSON API: only they are left out.
        let served = routes.filter { OpenAPIDocument.describes($0.path) }
        let pages = routes.subtracting(served)
        XCTAssertTrue(pages.allSatisfy { $0.path.hasPrefix("/console") }, "\(pages)")
        XCTAssertTrue(pages.contains(.init(method: "GET", path: "/console/reports")))
        XCTAssertTrue(served.allSatisfy { !$0.path.hasPrefix("/console") })
        let documented = Set(try OpenAPIDocument.operations())
        XCTAssertTrue(documented.allSatisfy { OpenAPIDocument.describes($0.path) }, "the document describes no console page")
        XCTAssertFalse(served.isEmpty)
        XCTAssertEqual(served.subtracting(documented).sorted(), [], "routes missing from openapi.json")
        XCTAssertEqual(documented.subtracting(served).sorted(), [], "documented operations the router does not serve")
    }

    func testOnlyWholeConsoleSegmentsAreLeftOut() {
        XCTAssertFalse(OpenAPIDocument.describes("/console"))
        XCTAssertFalse(OpenAPIDocument.describes("/console/users/{id}"))
        XCTAssertTrue(OpenAPIDocument.describes("/consoles"))
        XCTAssertTrue(OpenAPIDocument.describes("/v1/admin/reports"))
        XCTAssertTrue(OpenAPIDocument.describes("/v1/console"))
    }
}
