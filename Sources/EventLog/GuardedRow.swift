import Foundation
import Postgres

/// A row of another table that commits with an append, and only if the append wrote: the
/// event `appended` must have been appended by the same transaction (`EventLog.appendedHere`).
/// A sign-up's session and data key and a chat message's key are such rows. The group commit
/// writes all rows of one table in a batch with one statement (`GuardedTable`), after the
/// batch's inserts: one statement per table and batch instead of one per command.
public struct GuardedRow: Sendable {
    public var table: GuardedTable
    /// The event whose append the row goes with.
    public var appended: UUID
    /// One value per column of `table`, in its order.
    public var values: [any PostgresEncodable]

    public init(_ table: GuardedTable, appended: UUID, values: [any PostgresEncodable]) {
        precondition(values.count == table.columns, "a guarded row has a value for each column of its table")
        self.table = table
        self.appended = appended
        self.values = values
    }
}

/// A table that `GuardedRow`s go to, and the insert that writes any number of them: each column
/// sent as one array, each row only where its event was appended by the same transaction.
///
/// One insert for a batch's rows instead of one per row: with pgbench (16 appended events and
/// 16 `sessions` rows per transaction, 2 clients) 2,040–2,290 transactions a second against
/// 1,180–1,340.
public struct GuardedTable: Hashable, Sendable {
    /// The insert: `$1` the rows' events, then one array per column.
    public let sql: String
    /// Its number of columns.
    public let columns: Int

    /// `columns`: each column's name and the element type of the array it is sent as (the
    /// column's own type: values go in as they are sent).
    public init(_ table: String, columns: [(name: String, type: String)]) {
        let names = columns.map(\.name).joined(separator: ", ")
        let arrays = (["$1::uuid[]"] + columns.enumerated().map { "$\($0.offset + 2)::\($0.element.type)[]" })
        sql = """
            INSERT INTO \(table) (\(names))
            SELECT \(columns.map { "r.\($0.name)" }.joined(separator: ", "))
            FROM unnest(\(arrays.joined(separator: ", "))) AS r(appended, \(names))
            WHERE \(GuardedTable.rowAppendedHere)
            """
        self.columns = columns.count
    }

    /// A statement of its own for a batch's rows: `sql` takes `$1`, the rows' events, then one
    /// array per column; unnested as `r(appended, …)`, a row may be written only where
    /// `rowAppendedHere` holds. For writes that are not plain inserts (spending drop tokens).
    public init(sql: String, columns: Int) {
        self.sql = sql
        self.columns = columns
    }

    /// The guard of one unnested row `r`: its event `r.appended` was appended by this transaction.
    public static let rowAppendedHere = EventLog.appendedHere("r.appended")

    /// One statement per table for `rows`, tables in a fixed order.
    static func statements(for rows: [GuardedRow]) -> [Connection.Statement] {
        Dictionary(grouping: rows, by: \.table).sorted { $0.key.sql < $1.key.sql }.map { table, rows in
            var parameters: [any PostgresEncodable] = [rows.map(\.appended)]
            for column in 0..<table.columns { parameters.append(PostgresArray(rows.map { $0.values[column] })) }
            return Connection.Statement(table.sql, parameters, prepared: true)
        }
    }
}
