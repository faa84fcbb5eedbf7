import Domain
import Foundation
import PersonalData
import Postgres

/// `mates`: two rows per pair of mates (one per side) with the time they became mates.
/// A batch folds to each touched pair's final state: mates since a time, or not mates.
public struct MatesProjector: Projector {
    public init() {}
    public var name: String { "mates" }
    public var tables: [String] { ["mates"] }

    enum Final {
        case mates(since: Date)
        case apart
    }

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        try DeletedAccounts.remove(events, from: tables("mates"), naming: ["user_id", "mate_id"], on: connection)
        var finals: [MatePair: Final] = [:]
        var order: [MatePair] = []
        func set(_ pair: MatePair, _ final: Final) {
            if finals[pair] == nil { order.append(pair) }
            finals[pair] = final
        }
        for event in events {
            switch event.event {
            case .mateAccepted(let e): set(MatePair(e.from, e.to), .mates(since: e.at))
            case .matesUnpaired(let e): set(MatePair(e.by, e.mate), .apart)
            default: continue
            }
        }
        if order.isEmpty { return }
        // Both directions of every touched pair: the pairs that end apart removed, the pairs that
        // end as mates written with their time (a pair that parted and paired again in one batch
        // ends as mates since the second time). A batch of accepts alone deletes nothing: the
        // delete-all-then-insert this replaced probed every new pair for rows it never had
        // (30 µs per accept of PostgreSQL's time under `scripts/bench-http`).
        var apartUsers: [UUID] = []
        var apartMates: [UUID] = []
        var sinceUsers: [UUID] = []
        var sinceMates: [UUID] = []
        var since: [Date] = []
        for pair in order {
            switch finals[pair]! {
            case .mates(let at):
                sinceUsers += [pair.lo, pair.hi]
                sinceMates += [pair.hi, pair.lo]
                since += [at, at]
            case .apart:
                apartUsers += [pair.lo, pair.hi]
                apartMates += [pair.hi, pair.lo]
            }
        }
        if !apartUsers.isEmpty {
            try connection.execute(
                """
                DELETE FROM \(tables("mates")) WHERE (user_id, mate_id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))
                """,
                [apartUsers, apartMates]
            )
        }
        if !sinceUsers.isEmpty {
            try connection.execute(
                """
                INSERT INTO \(tables("mates")) (user_id, mate_id, mates_since)
                SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[])
                ON CONFLICT (user_id, mate_id) DO UPDATE SET mates_since = EXCLUDED.mates_since
                """,
                [sinceUsers, sinceMates, since]
            )
        }
    }
}
