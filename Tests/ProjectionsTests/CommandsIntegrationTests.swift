import Commands
import Domain
import EventLog
import Foundation
import Postgres
import PostgresTesting
import Projections
import XCTest

/// Through the real command handler, as the gateway drives it: read-your-writes with
/// `waitUntil`, and a dismissed notification that stays dismissed after a rebuild.
final class CommandsIntegrationTests: XCTestCase {
    func testHandlerCommandsAreReadableAfterWaitUntilAndADismissalSurvivesARebuild() async throws {
        // Commands and projectors as the runtime login, the rebuild as the owner: the swapped-in
        // tables must serve the runtime as the old ones did.
        let logins = try TestDatabase.createLogins("commands_integration")
        let pool = ConnectionPool(connectionString: logins.runtime, maxConnections: 4)
        let log = EventLog(pool: pool)
        let handler = CommandHandler(log: log, sealer: TestDatabase.sealer)
        let runner = ProjectionRunner(log: log, sealer: TestDatabase.sealer, connectionString: logins.runtime)
        runner.start()

        let alice = UUID()
        let bob = UUID()
        let profile = { (nickname: String) in
            DogProfile(nickname: nickname, dogName: "Dog " + nickname, age: 3, sex: .male, neutered: true, size: .small, keywords: [.smart])
        }
        _ = try await handler.handle(.registerUser(userID: alice, profile: profile("alice")), metadata: CommandMetadata(actor: alice))
        _ = try await handler.handle(.registerUser(userID: bob, profile: profile("bob")), metadata: CommandMetadata(actor: bob))
        let token = try await handler.issueDropToken(for: bob)
        let requested = try await handler.requestMate(from: alice, to: bob, dropToken: token.token, metadata: CommandMetadata(actor: alice))
        let seen = try await runner.waitUntil(
            position: requested.position!,
            projectors: ["notifications", "mate_requests"],
            timeout: .seconds(10)
        )
        XCTAssertTrue(seen)

        let inbox = try await pool.withConnection { c in
            try c.execute("SELECT notification_id, category, from_user, from_dog_name FROM notifications WHERE user_id = $1", [bob])
                .rows.map { (try $0.uuid(0), try $0.string(1), try $0.uuid(2), try $0.string(3)) }
        }
        XCTAssertEqual(inbox.count, 1)
        XCTAssertEqual(inbox.first?.1, "mate_requested")
        XCTAssertEqual(inbox.first?.2, alice)
        XCTAssertEqual(inbox.first?.3, "Dog alice")
        let notificationID = try XCTUnwrap(inbox.first?.0)

        let dismissed = try await handler.handle(
            .dismissNotification(userID: bob, notificationID: notificationID),
            metadata: CommandMetadata(actor: bob)
        )
        let gone = try await runner.waitUntil(position: dismissed.position!, projectors: ["notifications"], timeout: .seconds(10))
        XCTAssertTrue(gone)
        let again = try await handler.handle(
            .dismissNotification(userID: bob, notificationID: notificationID),
            metadata: CommandMetadata(actor: bob)
        )
        XCTAssertNil(again.position, "dismissing twice writes nothing")
        let remaining = try await pool.withConnection { try $0.execute("SELECT count(*) FROM notifications").first!.int(0) }
        XCTAssertEqual(remaining, 0)

        await runner.stop()
        let outcome = try await RebuildJob(connectionString: logins.owner, sealer: TestDatabase.sealer).run(
            onThread: { false },
            progress: { _ in }
        )
        guard case .swapped = outcome else { return XCTFail("\(outcome)") }
        let afterRebuild = try await pool.withConnection {
            (
                try $0.execute("SELECT count(*) FROM notifications").first!.int(0),
                try $0.execute("SELECT count(*) FROM mate_requests WHERE status = 'pending'").first!.int(0)
            )
        }
        XCTAssertEqual(afterRebuild.0, 0, "the dismissal is in the log, so the rebuilt inbox stays without it")
        XCTAssertEqual(afterRebuild.1, 1)
    }
}
