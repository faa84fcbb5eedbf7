import Domain
import Foundation
import PersonalData
import Postgres

/// `walks`: every walk request with its status, deadline and answer time. A batch folds to
/// one final row per walk: inserted whole if requested in the batch, else its status updated.
public struct WalksProjector: Projector {
    public init() {}
    public var name: String { "walks" }
    public var tables: [String] { ["walks"] }

    struct Row {
        /// Set when the walk was requested in this batch (the row is new).
        var requested: WalkRequested?
        var status: String
        var answeredAt: Date?
    }

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        try DeletedAccounts.remove(events, from: tables("walks"), naming: ["from_user", "to_user"], on: connection)
        var rows: [UUID: Row] = [:]
        var order: [UUID] = []
        func step(_ id: UUID, status: String, answeredAt: Date?) {
            if rows[id] == nil {
                order.append(id)
                rows[id] = Row(requested: nil, status: status, answeredAt: answeredAt)
            } else {
                rows[id]!.status = status
                if let answeredAt { rows[id]!.answeredAt = answeredAt }
            }
        }
        for event in events {
            switch event.event {
            case .walkRequested(let e):
                if rows[e.walkID] == nil { order.append(e.walkID) }
                rows[e.walkID] = Row(requested: e, status: "pending", answeredAt: nil)
            case .walkAccepted(let e): step(e.walkID, status: "accepted", answeredAt: e.at)
            case .walkDeclined(let e): step(e.walkID, status: "declined", answeredAt: e.at)
            case .walkCancelled(let e): step(e.walkID, status: "cancelled", answeredAt: e.at)
            // Expiry is not an answer: answered_at stays empty.
            case .walkExpired(let e): step(e.walkID, status: "expired", answeredAt: nil)
            default: continue
            }
        }
        guard !order.isEmpty else { return }
        // One upsert for new and known walks alike (index probes, never a scan): a known walk
        // only changes status and answer time; its other columns are sent empty and ignored.
        let r = order.map { rows[$0]! }
        try connection.execute(
            """
            INSERT INTO \(tables("walks")) (walk_id, from_user, to_user, message, latitude, longitude, place_name, status,
                                            created_at, expires_at, answered_at)
            SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::float8[], $6::float8[], $7::text[],
                                 $8::text[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[])
            ON CONFLICT (walk_id) DO UPDATE SET status = EXCLUDED.status,
                answered_at = coalesce(EXCLUDED.answered_at, \(tables("walks")).answered_at)
            """,
            [
                order, r.map { $0.requested?.from }, r.map { $0.requested?.to },
                r.map { $0.requested?.message }, r.map { $0.requested?.latitude },
                r.map { $0.requested?.longitude }, r.map { $0.requested?.placeName }, r.map(\.status),
                r.map { $0.requested?.createdAt }, r.map { $0.requested?.expiresAt }, r.map(\.answeredAt),
            ]
        )
    }
}
