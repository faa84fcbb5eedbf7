import Foundation
import XCTest

@testable import Domain

/// Dismissing an inbox entry is an event on the user stream, so a rebuilt inbox stays without it.
final class NotificationRulesTests: XCTestCase {
    let notification = UUID(uuidString: "f0000000-0000-4000-8000-000000000001")!

    func testDismissRecordsTheDismissalOnTheUserStream() throws {
        var w = try World.registered()
        let decision = try w.run(.dismissNotification(userID: alice, notificationID: notification))
        XCTAssertEqual(decision.appends.map(\.stream), [.user(alice)])
        XCTAssertEqual(
            decision.events(for: .user(alice)),
            [.notificationDismissed(NotificationDismissed(userID: alice, notificationID: notification, at: t0))]
        )
        XCTAssertEqual(w.state(.user(alice)).user!.dismissedNotifications, [notification])
    }

    func testDismissAgainIsANoOp() throws {
        var w = try World.registered()
        try w.run(.dismissNotification(userID: alice, notificationID: notification))
        let again = try w.run(.dismissNotification(userID: alice, notificationID: notification))
        XCTAssertTrue(again.isEmpty)
    }

    func testDismissByAnUnknownUserIsRefused() {
        let w = World()
        assertRefused("user_not_found") { _ = try w.decide(.dismissNotification(userID: alice, notificationID: self.notification)) }
    }
}
