import Domain
import Foundation
import PersonalData
import Postgres

/// `walk_logs`: every live walk log with its figures and visibility. A batch folds to one final
/// state per log: inserted if recorded in the batch, its visibility updated, or deleted.
/// Weekly and monthly stats are sums over these rows (`WalkLogsQueries.stats`), taken in the
/// time zone of the request, so the model needs no per-zone totals.
public struct WalkLogsProjector: Projector {
    public init() {}
    public var name: String { "walk_logs" }
    public var tables: [String] { ["walk_logs"] }

    struct Row {
        var logged: WalkLogged?
        var visibility: WalkLogVisibility?
        var deleted = false
    }

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        try DeletedAccounts.remove(events, from: tables("walk_logs"), naming: ["owner"], on: connection)
        var rows: [UUID: Row] = [:]
        var order: [UUID] = []
        func touch(_ id: UUID) {
            if rows[id] == nil {
                order.append(id)
                rows[id] = Row()
            }
        }
        for event in events {
            switch event.event {
            case .walkLogged(let e):
                touch(e.walkLogID)
                rows[e.walkLogID]!.logged = e
                rows[e.walkLogID]!.visibility = e.visibility
            case .walkLogVisibilityChanged(let e):
                touch(e.walkLogID)
                rows[e.walkLogID]!.visibility = e.visibility
            case .walkLogDeleted(let e):
                touch(e.walkLogID)
                rows[e.walkLogID]!.deleted = true
            default: continue
            }
        }
        guard !order.isEmpty else { return }
        let deleted = order.filter { rows[$0]!.deleted }
        let kept = order.filter { !rows[$0]!.deleted }
        if !deleted.isEmpty {
            try connection.execute("DELETE FROM \(tables("walk_logs")) WHERE walk_log_id = ANY($1::uuid[])", [deleted])
        }
        let new = kept.filter { rows[$0]!.logged != nil }
        if !new.isEmpty {
            let r = new.map { rows[$0]!.logged! }
            try connection.execute(
                """
                INSERT INTO \(tables("walk_logs")) (walk_log_id, owner, walk_id, started_at, ended_at, elapsed_seconds,
                                                    moving_seconds, distance_m, visibility, created_at)
                SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::timestamptz[], $6::int4[],
                                     $7::int4[], $8::float8[], $9::text[], $10::timestamptz[])
                ON CONFLICT (walk_log_id) DO NOTHING
                """,
                [
                    new, r.map(\.owner), r.map(\.walkID), r.map(\.figures.startedAt), r.map(\.figures.endedAt),
                    r.map { Int32($0.figures.elapsedSeconds) }, r.map { Int32($0.figures.movingSeconds) }, r.map(\.figures.distanceM),
                    new.map { rows[$0]!.visibility!.rawValue }, r.map(\.createdAt),
                ]
            )
        }
        let changed = kept.filter { rows[$0]!.logged == nil }
        if !changed.isEmpty {
            try connection.execute(
                """
                UPDATE \(tables("walk_logs")) w SET visibility = x.visibility
                FROM unnest($1::uuid[], $2::text[]) AS x(walk_log_id, visibility) WHERE w.walk_log_id = x.walk_log_id
                """,
                [changed, changed.map { rows[$0]!.visibility!.rawValue }]
            )
        }
    }
}
