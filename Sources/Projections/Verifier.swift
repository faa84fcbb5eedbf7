import EventLog
import Foundation
import PersonalData
import Postgres

/// `sniffmeet verify`: projects the whole log into scratch tables and compares them, row by
/// row, with the live read models.
///
/// Everything happens in one REPEATABLE READ transaction: the live tables and their checkpoints
/// are seen as of one instant, and each projector's scratch copy is built up to exactly that
/// projector's live checkpoint, so a projector that is merely behind is not a difference.
/// The scratch tables are temporary and vanish with the transaction. Blocking.
public struct Verifier: Sendable {
    public var connectionString: String
    /// Opens sealed personal parts of the events it folds.
    public var sealer: EventSealer
    public var projectors: [any Projector]
    public var batchSize: Int
    /// At most this many differing rows are reported per table and side.
    public var maxRowsShown: Int

    /// One row that is in one side only (as JSON text).
    public struct Difference: Sendable, Equatable {
        public enum Side: String, Sendable {
            case missingFromLive = "missing"
            case unexpectedInLive = "unexpected"
        }
        public var table: String
        public var side: Side
        public var row: String
    }

    /// The outcome per table.
    public struct TableReport: Sendable {
        public var table: String
        public var checkpoint: LogPosition
        public var liveRows: Int
        public var expectedRows: Int
        /// Rows in one side and not the other, counting duplicates.
        public var differingRows: Int
        public var samples: [Difference]
    }

    public init(
        connectionString: String,
        sealer: EventSealer,
        projectors: [any Projector] = Projectors.all,
        batchSize: Int = 5000,
        maxRowsShown: Int = 20
    ) {
        self.connectionString = connectionString
        self.sealer = sealer
        self.projectors = projectors
        self.batchSize = batchSize
        self.maxRowsShown = maxRowsShown
    }

    /// Runs the comparison; `progress` gets the number of events projected so far.
    public func run(progress: (Int) -> Void = { _ in }) throws -> [TableReport] {
        let connection = try Connection(connectionString: connectionString)
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        defer { _ = try? connection.execute("ROLLBACK") }
        var checkpoints: [String: LogPosition] = [:]
        for projector in projectors { checkpoints[projector.name] = try Checkpoints.read(projector.name, on: connection) }
        for projector in projectors {
            for table in projector.tables { try ReadModelTables.createCopy(of: table, in: .scratch, temporary: true, on: connection) }
        }
        let end = checkpoints.values.max() ?? .start
        var cursor = LogPosition.start
        var projected = 0
        // Every event up to a live checkpoint was committed before that checkpoint, so this
        // snapshot sees all of them: no horizon is needed.
        while cursor < end {
            let result = try connection.execute(
                """
                SELECT \(EventLog.columns) FROM events
                WHERE (transaction_id, position) > ($1::xid8, $2::bigint) AND (transaction_id, position) <= ($3::xid8, $4::bigint)
                ORDER BY transaction_id, position LIMIT $5
                """,
                [cursor.transactionID, cursor.position, end.transactionID, end.position, batchSize]
            )
            let records = try result.rows.map(EventLog.decodeEvent)
            guard let last = records.last?.position else { break }
            let events = try ProjectedEvent.decode(records, sealer: sealer, on: connection)
            for projector in projectors {
                let upTo = checkpoints[projector.name]!
                let mine = events.filter { $0.position <= upTo }
                if !mine.isEmpty { try projector.apply(mine, to: .scratch, on: connection, sealer: sealer) }
            }
            cursor = last
            projected += records.count
            progress(projected)
        }
        var reports: [TableReport] = []
        for projector in projectors {
            for table in projector.tables {
                reports.append(try compare(table, checkpoint: checkpoints[projector.name]!, on: connection))
            }
        }
        return reports
    }

    private func compare(_ table: String, checkpoint: LogPosition, on connection: Connection) throws -> TableReport {
        let live = TableSet.live(table)
        let scratch = TableSet.scratch(table)
        let counts = try connection.execute(
            """
            SELECT (SELECT count(*) FROM \(live)), (SELECT count(*) FROM \(scratch)),
                   (SELECT count(*) FROM (SELECT * FROM \(scratch) EXCEPT ALL SELECT * FROM \(live)) AS m),
                   (SELECT count(*) FROM (SELECT * FROM \(live) EXCEPT ALL SELECT * FROM \(scratch)) AS u)
            """
        ).first!
        let missing = try counts.int(2)
        let unexpected = try counts.int(3)
        var samples: [Difference] = []
        if missing + unexpected > 0 {
            let rows = try connection.execute(
                """
                (SELECT 'missing', row_to_json(m)::text FROM (SELECT * FROM \(scratch) EXCEPT ALL SELECT * FROM \(live)) AS m LIMIT $1)
                UNION ALL
                (SELECT 'unexpected', row_to_json(u)::text FROM (SELECT * FROM \(live) EXCEPT ALL SELECT * FROM \(scratch)) AS u LIMIT $1)
                """,
                [maxRowsShown]
            )
            for row in rows.rows {
                samples.append(
                    Difference(
                        table: table,
                        side: try row.string(0) == "missing" ? .missingFromLive : .unexpectedInLive,
                        row: try row.string(1)
                    )
                )
            }
        }
        return TableReport(
            table: table,
            checkpoint: checkpoint,
            liveRows: try counts.int(0),
            expectedRows: try counts.int(1),
            differingRows: missing + unexpected,
            samples: samples
        )
    }
}

/// A checksum of each read-model table's contents, independent of row order, for comparing
/// databases. Feed positions (`log_transaction_id`, `log_position`) can be left out: an import
/// gives events new positions.
public enum ReadModelChecksum {
    public static let feedColumns = ["log_transaction_id", "log_position"]

    /// `table -> "rows:md5"` for every table of `projectors`.
    public static func compute(
        projectors: [any Projector] = Projectors.all,
        tables set: TableSet = .live,
        excluding columns: [String] = [],
        on connection: Connection
    ) throws -> [String: String] {
        var sums: [String: String] = [:]
        for table in projectors.flatMap(\.tables) {
            let row = try connection.execute(
                """
                SELECT count(*), md5(coalesce(string_agg(r, E'\\n' ORDER BY r), ''))
                FROM (SELECT (to_jsonb(t) - $1::text[])::text AS r FROM \(set(table)) AS t) AS rows
                """,
                [columns]
            ).first!
            sums[table] = "\(try row.int(0)):\(try row.string(1))"
        }
        return sums
    }
}
