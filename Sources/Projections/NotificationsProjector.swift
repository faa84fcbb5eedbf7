import Domain
import EventLog
import Foundation
import PersonalData
import Postgres

/// `notifications`: each user's inbox. An entry's id is the id of the event that caused it;
/// `notification_dismissed` removes it. The sender's dog name is the one they had when the
/// event happened, kept in the projector's own `notification_senders` table (another read
/// model's table could be at a different checkpoint, and rebuilds would then differ).
/// New entries are also enqueued for push (`PushOutboxWriter`).
public struct NotificationsProjector: Projector {
    public init() {}
    public var name: String { "notifications" }
    public var tables: [String] { ["notifications", "notification_senders"] }

    struct Entry {
        var id: UUID
        var user: UUID
        var category: String
        var from: UUID
        var fromDogName: String?
        var requestID: UUID?
        var walk: WalkRequested?
        var walkID: UUID?
        var createdAt: Date
        var position: LogPosition
    }

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        try DeletedAccounts.remove(events, from: tables("notifications"), naming: ["user_id", "from_user"], on: connection)
        try DeletedAccounts.remove(events, from: tables("notification_senders"), naming: ["user_id"], on: connection)
        // A deleted account's pending pushes go with it.
        if tables == .live { try DeletedAccounts.remove(events, from: "push_outbox", naming: ["user_id"], on: connection) }
        // What this batch needs from before it: senders' dog names and walks requested earlier.
        var senders: Set<UUID> = []
        var walksBefore: Set<UUID> = []
        var walksInBatch: Set<UUID> = []
        for event in events {
            switch event.event {
            case .mateRequested(let e): senders.insert(e.from)
            case .mateAccepted(let e): senders.insert(e.to)
            case .walkRequested(let e):
                senders.insert(e.from)
                walksInBatch.insert(e.walkID)
            case .walkAccepted(let e), .walkDeclined(let e), .walkExpired(let e):
                senders.insert(e.to)
                if !walksInBatch.contains(e.walkID) { walksBefore.insert(e.walkID) }
            default: continue
            }
        }
        var dogNames = try loadDogNames(Array(senders), tables: tables, on: connection)
        var walks = try loadWalks(Array(walksBefore), sealer: sealer, on: connection)

        var entries: [UUID: Entry] = [:]
        var order: [UUID] = []
        var dismissals: [(id: UUID, user: UUID)] = []
        var cleared: Set<UUID> = []
        var senderUpdates: [UUID: String] = [:]
        func add(_ event: ProjectedEvent, user: UUID, _ category: String, from: UUID, requestID: UUID? = nil, walkID: UUID? = nil, at: Date)
        {
            let walk = walkID.flatMap { walks[$0] }
            entries[event.id] = Entry(
                id: event.id,
                user: user,
                category: category,
                from: from,
                fromDogName: dogNames[from],
                requestID: requestID,
                walk: walk,
                walkID: walkID,
                createdAt: at,
                position: event.position
            )
            order.append(event.id)
        }
        for event in events {
            switch event.event {
            case .userRegistered(let e):
                dogNames[e.userID] = e.profile.dogName
                senderUpdates[e.userID] = e.profile.dogName
            case .profileUpdated(let e):
                dogNames[e.userID] = e.profile.dogName
                senderUpdates[e.userID] = e.profile.dogName
            case .mateRequested(let e):
                add(event, user: e.to, "mate_requested", from: e.from, requestID: e.requestID, at: e.at)
            case .mateAccepted(let e):
                add(event, user: e.from, "mate_accepted", from: e.to, requestID: e.requestID, at: e.at)
            case .walkRequested(let e):
                walks[e.walkID] = e
                add(event, user: e.to, "walk_requested", from: e.from, walkID: e.walkID, at: e.createdAt)
            case .walkAccepted(let e):
                add(event, user: e.from, "walk_accepted", from: e.to, walkID: e.walkID, at: e.at)
            case .walkDeclined(let e):
                add(event, user: e.from, "walk_declined", from: e.to, walkID: e.walkID, at: e.at)
            case .walkExpired(let e):
                add(event, user: e.from, "walk_expired", from: e.to, walkID: e.walkID, at: e.at)
            case .notificationsCleared(let e):
                // Entries made earlier in this batch are not written, earlier ones are deleted;
                // later ones stay.
                for (id, entry) in entries where entry.user == e.userID { entries[id] = nil }
                cleared.insert(e.userID)
            case .notificationDismissed(let e):
                // An entry made earlier in this batch is simply not written; one from an
                // earlier batch is deleted. Either way the effect equals one event at a time.
                if let entry = entries[e.notificationID], entry.user == e.userID {
                    entries[e.notificationID] = nil
                } else {
                    dismissals.append((e.notificationID, e.userID))
                }
            default:
                continue
            }
        }

        if !cleared.isEmpty {
            try connection.execute("DELETE FROM \(tables("notifications")) WHERE user_id = ANY($1::uuid[])", [Array(cleared)])
        }
        if !dismissals.isEmpty {
            try connection.execute(
                """
                DELETE FROM \(tables("notifications")) AS n USING unnest($1::uuid[], $2::uuid[]) AS d(id, user_id)
                WHERE n.notification_id = d.id AND n.user_id = d.user_id
                """,
                [dismissals.map(\.id), dismissals.map(\.user)]
            )
        }
        let rows = order.compactMap { entries[$0] }
        if !rows.isEmpty {
            try connection.execute(
                """
                INSERT INTO \(tables("notifications")) (notification_id, user_id, category, from_user, from_dog_name, request_id,
                    walk_id, message, latitude, longitude, place_name, created_at, log_transaction_id, log_position)
                SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::uuid[], $7::uuid[],
                                     $8::text[], $9::float8[], $10::float8[], $11::text[], $12::timestamptz[], $13::xid8[],
                                     $14::bigint[])
                """,
                [
                    rows.map(\.id), rows.map(\.user), rows.map(\.category), rows.map(\.from),
                    rows.map(\.fromDogName), rows.map(\.requestID), rows.map(\.walkID),
                    rows.map { $0.walk?.message }, rows.map { $0.walk?.latitude },
                    rows.map { $0.walk?.longitude }, rows.map { $0.walk?.placeName }, rows.map(\.createdAt),
                    rows.map(\.position.transactionID), rows.map(\.position.position),
                ]
            )
        }
        try PushOutboxWriter.enqueue(
            rows.map {
                .init(
                    notificationID: $0.id,
                    user: $0.user,
                    at: $0.createdAt,
                    expiresAt: $0.category == "walk_requested" ? $0.walk?.expiresAt : nil
                )
            },
            to: tables,
            on: connection
        )
        if !senderUpdates.isEmpty {
            let ids = Array(senderUpdates.keys)
            try connection.execute(
                """
                INSERT INTO \(tables("notification_senders")) (user_id, dog_name)
                SELECT * FROM unnest($1::uuid[], $2::text[])
                ON CONFLICT (user_id) DO UPDATE SET dog_name = EXCLUDED.dog_name
                """,
                [ids, ids.map { senderUpdates[$0]! }]
            )
        }
    }

    private func loadDogNames(_ users: [UUID], tables: TableSet, on connection: Connection) throws -> [UUID: String] {
        guard !users.isEmpty else { return [:] }
        var names: [UUID: String] = [:]
        let result = try connection.execute(
            "SELECT user_id, dog_name FROM \(tables("notification_senders")) WHERE user_id = ANY($1::uuid[])",
            [users]
        )
        for row in result.rows { names[try row.uuid(0)] = try row.string(1) }
        return names
    }

    /// Walks requested before this batch: from the walks read model, and from the log (each walk
    /// stream's first event) for those it does not hold (its projector behind this one, a
    /// rebuild into an empty database). A request's message and place never change, so either
    /// source gives an entry the same text; a walk whose sender was erased is in neither (the
    /// walks read model drops it, the log opens it as `.erased`), and the entries naming them go
    /// when this projector reaches the deletion. Reading every answered walk back from the log
    /// cost 14.6 µs of PostgreSQL per response, and opening its data again.
    private func loadWalks(_ walkIDs: [UUID], sealer: EventSealer, on connection: Connection) throws -> [UUID: WalkRequested] {
        guard !walkIDs.isEmpty else { return [:] }
        var walks = try WalksQueries.requested(walkIDs, on: connection)
        let missing = walkIDs.filter { walks[$0] == nil }
        guard !missing.isEmpty else { return walks }
        let result = try connection.execute(
            "SELECT \(EventLog.columns) FROM events WHERE stream_id = ANY($1::text[]) AND stream_version = 1",
            [missing.map { StreamName.walk($0).rawValue }]
        )
        for event in try sealer.events(from: try result.rows.map(EventLog.decodeEvent), on: connection) {
            if case .walkRequested(let walk) = event { walks[walk.walkID] = walk }
        }
        return walks
    }
}
