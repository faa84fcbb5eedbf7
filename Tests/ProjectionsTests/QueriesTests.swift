import Domain
import EventLog
import Foundation
import Postgres
import PostgresTesting
import Projections
import XCTest

/// The read models' query types against projected tables: every row comes back, typed, with
/// the values the log's own fold gives, and keyset pages cover each list once, newest first.
final class QueriesTests: XCTestCase {
    func testQueriesReadBackEveryProjectedRowTyped() async throws {
        let h = try Harness("queries", seed: 19, users: 30)
        try await h.append(800)
        var options = ProjectionRunner.Options()
        options.pollInterval = .milliseconds(50)
        let runner = ProjectionRunner(log: h.log, sealer: TestDatabase.sealer, connectionString: h.connectionString, options: options)
        runner.start()
        let caughtUp = try await runner.waitUntil(position: h.lastPosition, timeout: .seconds(60))
        await runner.stop()
        XCTAssertTrue(caughtUp)
        let expected = h.expected()
        let users = expected.profiles.compactMap { UUID(uuidString: String($0.prefix(36))) }
        XCTAssertEqual(users.count, expected.profiles.count)
        XCTAssertGreaterThan(expected.mates.count, 0)
        XCTAssertGreaterThan(expected.walks.count, 0)
        XCTAssertGreaterThan(expected.notifications.count, 0)
        let last = h.lastPosition

        let actual = try await h.query { c -> ReadModelRows in
            var rows = ReadModelRows()
            var inboxes = 0
            for user in users {
                let own = try XCTUnwrap(try c.run(ProfilesQueries.profile(of: user)))
                try Self.assertCard(try XCTUnwrap(try c.run(ProfilesQueries.card(of: user, seenBy: user))), shows: own)
                rows.profiles.append(Self.line(own))
                let mates = try Self.pages { try c.run(MatesQueries.mates(of: user, after: $0, limit: Self.pageSize)) }
                for mate in mates {
                    rows.mates.append(ReadModelRows.mate(user, mate.mate.userID, mate.matesSince))
                    // A mate's card, unless an operator suspended them (then it is 404 to everyone).
                    let suspended = h.workload.states[.user(mate.mate.userID)]?.user?.isSuspended == true
                    XCTAssertEqual(try c.run(ProfilesQueries.card(of: mate.mate.userID, seenBy: user)), suspended ? nil : mate.mate)
                }
                let requests = try Self.pages {
                    try c.run(MateRequestsQueries.requests(of: user, direction: "outgoing", status: nil, after: $0, limit: Self.pageSize))
                }
                for r in requests {
                    try Self.assertCard(r.from, shows: own)
                    rows.mateRequests.append(
                        ReadModelRows.request(r.requestID, r.from.userID, r.to.userID, r.status, r.createdAt, r.updatedAt)
                    )
                }
                let walks = try Self.pages {
                    try c.run(
                        WalksQueries.walks(
                            of: user,
                            direction: "outgoing",
                            status: nil,
                            after: $0,
                            limit: Self.pageSize,
                            now: Date()
                        )
                    )
                }
                for w in walks {
                    try Self.assertCard(w.from, shows: own)
                    XCTAssertEqual(try c.run(WalksQueries.walk(w.walkID, seenBy: w.to.userID))?.key, w.key)
                    rows.walks.append(
                        ReadModelRows.walk(
                            w.walkID,
                            w.from.userID,
                            w.to.userID,
                            w.message,
                            w.latitude,
                            w.longitude,
                            w.placeName,
                            w.status,
                            w.createdAt,
                            w.expiresAt,
                            w.answeredAt
                        )
                    )
                }
                // The inbox, newest first in pages of 4, then the same entries oldest first.
                var inbox: [NotificationRow] = []
                while true {
                    let page = try c.run(NotificationsQueries.inbox(of: user, before: inbox.last?.position, limit: 4))
                    XCTAssertTrue(zip(inbox + page, (inbox + page).dropFirst()).allSatisfy { $0.position > $1.position })
                    inbox += page
                    if page.count < 4 { break }
                }
                let oldestFirst = try c.run(NotificationsQueries.entries(of: user, after: .start, limit: 1000))
                XCTAssertEqual(oldestFirst.map(\.notificationID), inbox.reversed().map(\.notificationID))
                for entry in inbox {
                    XCTAssertTrue(try c.run(NotificationsQueries.has(entry.notificationID, of: user)))
                    rows.notifications.append("\(entry.notificationID.lowercasedString)|\(user.lowercasedString)")
                }
                inboxes += inbox.count
            }
            // The live feed's round over everyone: every entry, each with its user, read to the checkpoint.
            let round = try c.run(NotificationsQueries.feed(users: users, after: .start, limit: inboxes + 1))
            XCTAssertEqual(round.entries.count, inboxes)
            XCTAssertGreaterThanOrEqual(round.readTo, last)
            let cut = try c.run(NotificationsQueries.feed(users: users, after: .start, limit: 2))
            XCTAssertEqual(cut.readTo, cut.entries.last?.entry.position)
            return rows.sorted()
        }
        assertSameRows(actual, expected)
    }

    /// Small, so that every list spans several pages.
    static let pageSize = 3

    /// Every row of a keyset-paged list, checking that keys only go down.
    static func pages<Row>(_ fetch: (TimeKey?) throws -> [Row]) throws -> [Row] where Row: Keyed {
        var all: [Row] = []
        while true {
            let page = try fetch(all.last?.key)
            all += page
            if page.count < pageSize { break }
        }
        let keys = all.map { ($0.key.micros, $0.key.id.lowercasedString) }
        XCTAssertTrue(zip(keys, keys.dropFirst()).allSatisfy { $0 > $1 }, "\(keys)")
        return all
    }

    /// A stored card is the card object of the profile: every member, nothing else.
    static func assertCard(_ card: CardRow, shows p: ProfileRow, line: UInt = #line) throws {
        XCTAssertEqual(card.userID, p.userID, line: line)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(card.json)) as? [String: Any], line: line)
        XCTAssertEqual(
            Set(object.keys),
            ["user_id", "nickname", "dog_name", "age", "sex", "neutered", "size", "keywords", "profile_image"],
            line: line
        )
        XCTAssertEqual(object["user_id"] as? String, p.userID.lowercasedString, line: line)
        XCTAssertEqual(object["nickname"] as? String, p.profile.nickname, line: line)
        XCTAssertEqual(object["dog_name"] as? String, p.profile.dogName, line: line)
        XCTAssertEqual(object["age"] as? Int, p.profile.age, line: line)
        XCTAssertEqual(object["sex"] as? String, p.profile.sex.rawValue, line: line)
        XCTAssertEqual(object["neutered"] as? Bool, p.profile.neutered, line: line)
        XCTAssertEqual(object["size"] as? String, p.profile.size.rawValue, line: line)
        XCTAssertEqual(object["keywords"] as? [String], p.profile.keywords.map(\.rawValue), line: line)
        XCTAssertEqual(object["profile_image"] as? String, p.profile.profileImage, line: line)
        XCTAssertTrue(p.profile.profileImage != nil || object["profile_image"] is NSNull, line: line)
    }

    static func line(_ p: ProfileRow) -> String {
        ReadModelRows.profile(
            p.userID,
            p.profile.nickname,
            p.profile.dogName,
            p.profile.age,
            p.profile.sex.rawValue,
            p.profile.neutered,
            p.profile.size.rawValue,
            p.profile.keywords.map(\.rawValue),
            p.profile.profileImage,
            p.createdAt
        )
    }
}

/// A row of a keyset-paged list.
protocol Keyed { var key: TimeKey { get } }
extension MateRow: Keyed {}
extension MateRequestRow: Keyed {}
extension WalkRow: Keyed {}
