import Domain
import Foundation
import PersonalData
import Postgres

/// `mate_requests`: every mate request with its current status. Every mate event names its
/// request, requester and addressee, so a batch folds to one final row per request.
public struct MateRequestsProjector: Projector {
    public init() {}
    public var name: String { "mate_requests" }
    public var tables: [String] { ["mate_requests"] }

    struct Row {
        var from: UUID
        var to: UUID
        /// Set when the request was made in this batch (the row is new).
        var createdAt: Date?
        var status: String
        var updatedAt: Date
    }

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        try DeletedAccounts.remove(events, from: tables("mate_requests"), naming: ["from_user", "to_user"], on: connection)
        var rows: [UUID: Row] = [:]
        var order: [UUID] = []
        func step(_ id: UUID, from: UUID, to: UUID, status: String, at: Date, created: Bool) {
            if var row = rows[id] {
                row.status = status
                row.updatedAt = at
                if created { row.createdAt = at }
                rows[id] = row
            } else {
                order.append(id)
                rows[id] = Row(from: from, to: to, createdAt: created ? at : nil, status: status, updatedAt: at)
            }
        }
        for event in events {
            switch event.event {
            case .mateRequested(let e): step(e.requestID, from: e.from, to: e.to, status: "pending", at: e.at, created: true)
            case .mateAccepted(let e): step(e.requestID, from: e.from, to: e.to, status: "accepted", at: e.at, created: false)
            case .mateDeclined(let e): step(e.requestID, from: e.from, to: e.to, status: "declined", at: e.at, created: false)
            case .mateRequestCancelled(let e): step(e.requestID, from: e.from, to: e.to, status: "cancelled", at: e.at, created: false)
            default: continue
            }
        }
        guard !order.isEmpty else { return }
        // One upsert for new and known requests alike: the conflict check is an index probe per
        // row, where an UPDATE … FROM unnest may scan the whole table for each batch. A known
        // request keeps its created_at; only status and updated_at move.
        let r = order.map { rows[$0]! }
        try connection.execute(
            """
            INSERT INTO \(tables("mate_requests")) (request_id, from_user, to_user, status, created_at, updated_at)
            SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::timestamptz[], $6::timestamptz[])
            ON CONFLICT (request_id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at
            """,
            [
                order, r.map(\.from), r.map(\.to),
                r.map(\.status), r.map(\.createdAt), r.map(\.updatedAt),
            ]
        )
    }
}
