import EventLog
import Foundation
import Postgres
import Projections
import UUIDText

/// The queries of the API, as JSON values. The SQL and its typed rows live beside each
/// projector (`ProfilesQueries`, `MatesQueries`, `MateRequestsQueries`, `WalksQueries`,
/// `NotificationsQueries` in `Projections`); this facade borrows a connection through the
/// gate, turns cursors into keyset keys and rows into the JSON of API.md.
///
/// Lists are newest first with one extra row fetched to know whether a next page exists.
public struct ReadModels: Sendable {
    /// The primary's pool.
    let primary: ConnectionPool
    let gate: DatabaseGate

    /// Where a read goes: the request's replica when `ReplicaRoutingMiddleware` chose one (a
    /// query route with replicas in use), else the primary.
    var pool: ConnectionPool { ReadChoice.current?.pool ?? primary }

    public init(pool: ConnectionPool, gate: DatabaseGate) {
        self.primary = pool
        self.gate = gate
    }

    // MARK: Profiles

    /// The caller's own profile.
    public func profile(of user: UUID) async throws -> ProfileJSON? {
        try await gate.run(ProfilesQueries.profile(of: user), on: pool)
            .map { ProfileJSON(card: CardJSON(userID: $0.userID, profile: $0.profile), createdAt: $0.createdAt) }
    }

    /// The card of `other` if `viewer` may see it: themselves, a mate, or someone with a mate
    /// request or a walk between the two. Anyone else is indistinguishable from nobody.
    public func card(of other: UUID, seenBy viewer: UUID) async throws -> CardJSON? {
        try await gate.run(ProfilesQueries.card(of: other, seenBy: viewer), on: pool).map(CardJSON.init)
    }

    /// What deleting `user`'s account must settle (`AccountTiesQueries`).
    public func ties(of user: UUID) async throws -> AccountTies {
        try await gate.run(AccountTiesQueries.ties(of: user), on: pool)
    }

    // MARK: Safety

    /// Whom `user` blocked, newest first.
    public func blocks(of user: UUID, page: PageRequest) async throws -> PageJSON<BlockJSON> {
        let after = try page.after.map(Self.timeKey)
        let rows = try await gate.run(SafetyQueries.blocks(of: user, after: after, limit: page.limit + 1), on: pool)
        return page.page(rows, item: BlockJSON.init, key: { Self.cursor($0.key) })
    }

    /// Reports in `status`, newest first (operators only).
    public func reports(status: String, page: PageRequest) async throws -> PageJSON<ReportJSON> {
        let after = try page.after.map(Self.timeKey)
        let rows = try await gate.run(SafetyQueries.reports(status: status, after: after, limit: page.limit + 1), on: pool)
        return page.page(rows, item: ReportJSON.init, key: { Self.cursor($0.key) })
    }

    /// One report (operators only).
    public func report(_ id: UUID) async throws -> ReportJSON? {
        try await gate.run(SafetyQueries.report(id), on: pool).map(ReportJSON.init)
    }

    /// The pending walks between two users.
    public func pendingWalks(between a: UUID, and b: UUID) async throws -> [UUID] {
        try await gate.run(SafetyQueries.pendingWalks(between: a, and: b), on: pool)
    }

    // MARK: Mates

    /// The caller's mates, newest first.
    public func mates(of user: UUID, page: PageRequest) async throws -> PageJSON<MateJSON> {
        let after = try page.after.map(Self.timeKey)
        let rows = try await gate.run(MatesQueries.mates(of: user, after: after, limit: page.limit + 1), on: pool)
        return page.page(rows, item: { MateJSON(card: CardJSON($0.mate), matesSince: $0.matesSince) }, key: { Self.cursor($0.key) })
    }

    /// The caller's mate requests, newest first; `incoming`, `outgoing` or both, optionally by status.
    public func mateRequests(
        of user: UUID,
        direction: Direction?,
        status: String?,
        page: PageRequest
    ) async throws -> PageJSON<MateRequestJSON> {
        let after = try page.after.map(Self.timeKey)
        let rows = try await gate.run(
            MateRequestsQueries.requests(
                of: user,
                direction: direction?.rawValue,
                status: status,
                after: after,
                limit: page.limit + 1
            ),
            on: pool
        )
        return page.page(
            rows,
            item: { row in
                MateRequestJSON(
                    requestID: row.requestID,
                    from: CardJSON(row.from),
                    to: CardJSON(row.to),
                    status: row.status,
                    createdAt: row.createdAt,
                    updatedAt: row.updatedAt
                )
            },
            key: { Self.cursor($0.key) }
        )
    }

    // MARK: Walks

    /// One walk, if `viewer` sent or received it.
    public func walk(_ id: UUID, seenBy viewer: UUID) async throws -> WalkJSON? {
        let now = Date()
        return try await gate.run(WalksQueries.walk(id, seenBy: viewer), on: pool).map { Self.walk($0, now: now) }
    }

    /// The caller's walks, newest first; `incoming`, `outgoing` or both, optionally by status.
    /// `expired` also finds pending walks past their deadline (they are shown as expired).
    public func walks(of user: UUID, direction: Direction?, status: String?, page: PageRequest) async throws -> PageJSON<WalkJSON> {
        let after = try page.after.map(Self.timeKey)
        let now = Date()
        let rows = try await gate.run(
            WalksQueries.walks(
                of: user,
                direction: direction?.rawValue,
                status: status,
                after: after,
                limit: page.limit + 1,
                now: now
            ),
            on: pool
        )
        return page.page(rows, item: { Self.walk($0, now: now) }, key: { Self.cursor($0.key) })
    }

    static func walk(_ row: WalkRow, now: Date) -> WalkJSON {
        WalkJSON(
            walkID: row.walkID,
            from: CardJSON(row.from),
            to: CardJSON(row.to),
            message: row.message,
            latitude: row.latitude,
            longitude: row.longitude,
            placeName: row.placeName,
            status: WalkJSON.shownStatus(row.status, expiresAt: row.expiresAt, now: now),
            createdAt: row.createdAt,
            expiresAt: row.expiresAt,
            answeredAt: row.answeredAt
        )
    }

    // MARK: Notifications

    /// The caller's inbox, newest first (by the feed position of the event behind each entry).
    public func notifications(of user: UUID, page: PageRequest) async throws -> PageJSON<NotificationJSON> {
        let before = try page.after.map { parts -> LogPosition in
            // xid8 and log positions are never negative; bigint and xid8 hold the rest.
            guard let xid = UInt64(parts.0), let position = Int64(parts.1), position >= 0 else {
                throw APIError.validation("cursor", "cursor is not one we gave out")
            }
            return LogPosition(transactionID: xid, position: position)
        }
        let rows = try await gate.run(NotificationsQueries.inbox(of: user, before: before, limit: page.limit + 1), on: pool)
        return page.page(rows, item: { $0 }, key: { (String($0.position.transactionID), String($0.position.position)) })
    }

    /// The caller's entries after `position`, oldest first (the SSE stream).
    public func notifications(of user: UUID, after position: LogPosition, limit: Int) async throws -> [NotificationJSON] {
        try await gate.run(NotificationsQueries.entries(of: user, after: position, limit: limit), on: pool)
    }

    /// One round of `NotificationFeed`: new entries of `users` after `position` and the
    /// position the feed has now read to (see `NotificationsQueries.feed`).
    public func feed(
        users: [UUID],
        after position: LogPosition,
        limit: Int
    ) async throws
        -> (entries: [(user: UUID, entry: NotificationJSON)], readTo: LogPosition)
    {
        let round = try await gate.run(NotificationsQueries.feed(users: users, after: position, limit: limit), on: pool)
        return (round.entries.map { (user: $0.user, entry: $0.entry) }, round.readTo)
    }

    /// Whether the caller has this inbox entry.
    public func hasNotification(_ id: UUID, of user: UUID) async throws -> Bool {
        try await gate.run(NotificationsQueries.has(id, of: user), on: pool)
    }

    // MARK: Cursors

    /// Microseconds since 1970 of the years a row of ours can carry (1970 to 9999): a forged
    /// cursor outside them would overflow PostgreSQL's timestamp arithmetic.
    static let cursorMicros: ClosedRange<Int64> = 0...253_402_300_799_999_999

    /// A (microseconds, uuid) cursor, checked.
    static func timeKey(_ parts: (String, String)) throws -> TimeKey {
        guard let micros = Int64(parts.0), Self.cursorMicros.contains(micros), let id = UUID(text: parts.1) else {
            throw APIError.validation("cursor", "cursor is not one we gave out")
        }
        return TimeKey(micros: micros, id: id)
    }

    /// The cursor parts of a keyset key.
    static func cursor(_ key: TimeKey) -> (String, String) {
        (String(key.micros), key.id.lowercasedString)
    }
}

/// `?direction=` of the list routes.
public enum Direction: String, Sendable {
    case incoming, outgoing
}
