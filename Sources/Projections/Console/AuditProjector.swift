import Domain
import Foundation
import PersonalData
import Postgres

/// `operator_actions`: which operator resolved a report, suspended a user or lifted a
/// suspension, and when: the console's audit log. Actions recorded before operators had names
/// read as operator `admin`. Rows name users by id only and outlive an erased account (the
/// operator's record of what they did stays).
public struct AuditProjector: Projector {
    public init() {}
    public var name: String { "audit" }
    public var tables: [String] { ["operator_actions"] }

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        var ids: [UUID] = []
        var operators: [String] = []
        var actions: [String] = []
        var users: [UUID] = []
        var reports: [UUID?] = []
        var moments: [Date] = []
        func add(_ id: UUID, _ name: String, _ action: String, _ user: UUID, _ report: UUID?, _ at: Date) {
            ids.append(id)
            operators.append(name)
            actions.append(action)
            users.append(user)
            reports.append(report)
            moments.append(at)
        }
        for event in events {
            switch event.event {
            case .reportResolved(let e): add(event.id, e.operatorName, "resolve", e.reported, e.reportID, e.at)
            case .userSuspended(let e): add(event.id, e.operatorName, "suspend", e.userID, nil, e.at)
            case .userUnsuspended(let e): add(event.id, e.operatorName, "lift", e.userID, nil, e.at)
            default: continue
            }
        }
        guard !ids.isEmpty else { return }
        try connection.execute(
            """
            INSERT INTO \(tables("operator_actions")) (event_id, operator, action, user_id, report_id, at)
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::uuid[], $6::timestamptz[])
            ON CONFLICT (event_id) DO NOTHING
            """,
            [ids, operators, actions, users, reports, moments]
        )
    }
}
