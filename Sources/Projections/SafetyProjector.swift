import Domain
import Foundation
import PersonalData
import Postgres

/// `blocks` (whom each user blocked) and `reports` (for the operators' review). A batch folds to
/// each touched block's final state and each report's final row.
public struct SafetyProjector: Projector {
    public init() {}
    public var name: String { "safety" }
    public var tables: [String] { ["blocks", "reports"] }

    struct BlockKey: Hashable {
        var blocker: UUID
        var blocked: UUID
    }

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        try DeletedAccounts.remove(events, from: tables("blocks"), naming: ["blocker", "blocked"], on: connection)
        try DeletedAccounts.remove(events, from: tables("reports"), naming: ["reporter", "reported"], on: connection)
        var blocks: [BlockKey: Date?] = [:]
        var blockOrder: [BlockKey] = []
        var filed: [UUID: UserReported] = [:]
        var fileOrder: [UUID] = []
        var resolved: [UUID: Date] = [:]
        for event in events {
            switch event.event {
            case .userBlocked(let e), .userUnblocked(let e):
                let key = BlockKey(blocker: e.by, blocked: e.blocked)
                if blocks[key] == nil { blockOrder.append(key) }
                blocks[key] = event.event.typeName == "user_blocked" ? e.at : .some(nil)
            case .userReported(let e):
                filed[e.reportID] = e
                fileOrder.append(e.reportID)
            case .reportResolved(let e):
                resolved[e.reportID] = e.at
            default:
                continue
            }
        }
        if !blockOrder.isEmpty {
            try connection.execute(
                """
                DELETE FROM \(tables("blocks")) WHERE (blocker, blocked) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))
                """,
                [blockOrder.map(\.blocker), blockOrder.map(\.blocked)]
            )
            let kept = blockOrder.compactMap { key in blocks[key]!.map { (key, $0) } }
            if !kept.isEmpty {
                try connection.execute(
                    """
                    INSERT INTO \(tables("blocks")) (blocker, blocked, blocked_at)
                    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[])
                    """,
                    [kept.map(\.0.blocker), kept.map(\.0.blocked), kept.map(\.1)]
                )
            }
        }
        if !fileOrder.isEmpty {
            let reports = fileOrder.map { filed[$0]! }
            try connection.execute(
                """
                INSERT INTO \(tables("reports"))
                    (report_id, reporter, reported, reason, walk_id, note, status, created_at, resolved_at, message_id)
                SELECT id, reporter, reported, reason, walk_id, note, CASE WHEN resolved_at IS NULL THEN 'open' ELSE 'resolved' END,
                       created_at, resolved_at, message_id
                FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::timestamptz[],
                            $8::timestamptz[], $9::uuid[])
                    AS x(id, reporter, reported, reason, walk_id, note, created_at, resolved_at, message_id)
                """,
                [
                    reports.map(\.reportID), reports.map(\.reporter), reports.map(\.reported), reports.map(\.reason.rawValue),
                    reports.map(\.walkID), reports.map(\.note), reports.map(\.at), reports.map { resolved[$0.reportID] },
                    reports.map(\.messageID),
                ]
            )
        }
        let earlier = resolved.filter { filed[$0.key] == nil }
        if !earlier.isEmpty {
            try connection.execute(
                """
                UPDATE \(tables("reports")) AS r SET status = 'resolved', resolved_at = x.at
                FROM unnest($1::uuid[], $2::timestamptz[]) AS x(id, at)
                WHERE r.report_id = x.id AND r.status = 'open'
                """,
                [Array(earlier.keys), earlier.keys.map { earlier[$0]! }]
            )
        }
    }
}
