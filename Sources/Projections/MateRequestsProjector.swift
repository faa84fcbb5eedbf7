import Domain
import Foundation
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

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection) throws {
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
        let inserted = order.filter { rows[$0]!.createdAt != nil }
        let updated = order.filter { rows[$0]!.createdAt == nil }
        if !inserted.isEmpty {
            let r = inserted.map { rows[$0]! }
            try connection.execute("""
                INSERT INTO \(tables("mate_requests")) (request_id, from_user, to_user, status, created_at, updated_at)
                SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::timestamptz[], $6::timestamptz[])
                """, [inserted, r.map(\.from), r.map(\.to), r.map(\.status), r.map(\.createdAt), r.map(\.updatedAt)])
        }
        if !updated.isEmpty {
            let r = updated.map { rows[$0]! }
            try connection.execute("""
                UPDATE \(tables("mate_requests")) AS m SET status = x.status, updated_at = x.updated_at
                FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS x(request_id, status, updated_at)
                WHERE m.request_id = x.request_id
                """, [updated, r.map(\.status), r.map(\.updatedAt)])
        }
    }
}
