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
        // Both directions of every touched pair: removed first, then the pairs that end as mates
        // written back, so a pair that parted and paired again in one batch ends right.
        var users: [UUID] = []
        var mates: [UUID] = []
        var sinceUsers: [UUID] = []
        var sinceMates: [UUID] = []
        var since: [Date] = []
        for pair in order {
            users += [pair.lo, pair.hi]
            mates += [pair.hi, pair.lo]
            if case .mates(let at) = finals[pair]! {
                sinceUsers += [pair.lo, pair.hi]
                sinceMates += [pair.hi, pair.lo]
                since += [at, at]
            }
        }
        try connection.execute(
            """
            DELETE FROM \(tables("mates")) WHERE (user_id, mate_id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))
            """,
            [users, mates]
        )
        if !sinceUsers.isEmpty {
            try connection.execute(
                """
                INSERT INTO \(tables("mates")) (user_id, mate_id, mates_since)
                SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[])
                """,
                [sinceUsers, sinceMates, since]
            )
        }
    }
}
