import Foundation
import Postgres

/// DDL helpers shared by rebuild, verify and the benchmarks' in-SQL rebuild: fresh copies of
/// read-model tables, and swapping them in. Every name here comes from the projectors'
/// constants, never from input.
public enum ReadModelTables {
    static func quoted(_ identifier: String) -> String { "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// Creates `table` in `set` with the live table's columns, defaults, constraints and indexes
    /// (unless it exists already: a rerun resumes). Temporary tables vanish at commit.
    public static func createCopy(of table: String, in set: TableSet, temporary: Bool = false, on connection: Connection) throws {
        let kind = temporary ? "TEMPORARY TABLE" : "TABLE IF NOT EXISTS"
        let tail = temporary ? " ON COMMIT DROP" : ""
        try connection.execute("CREATE \(kind) \(set(table)) (LIKE \(TableSet.live(table)) INCLUDING ALL)\(tail)")
        // LIKE copies no storage parameters: the copy keeps the live table's fillfactor (the
        // room that keeps `chat_conversations`' updates HOT), or it would lose it when swapped in.
        let options = try connection.execute(
            "SELECT array_to_string(reloptions, ', ') FROM pg_class WHERE oid = to_regclass($1)",
            [TableSet.live(table)]
        )
        if let options = options.first?.optionalString(0), !options.isEmpty {
            try connection.execute("ALTER TABLE \(set(table)) SET (\(options))")
        }
    }

    /// Inside the caller's transaction: drops the live `table`, renames the copy in `set` to
    /// it, and gives its indexes (named after the copy by LIKE) the live names back, so the next
    /// rebuild can make copies again.
    static func swapIn(_ table: String, from set: TableSet, on connection: Connection) throws {
        try connection.execute("DROP TABLE \(TableSet.live(table))")
        try connection.execute("ALTER TABLE \(set(table)) RENAME TO \(TableSet.live(table))")
        let indexes = try connection.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1",
            [table]
        )
        .rows.map { try $0.string(0) }
        let prefix = set.raw(table)
        for index in indexes where index.hasPrefix(prefix) {
            let renamed = table + index.dropFirst(prefix.count)
            try connection.execute("ALTER INDEX \(quoted(index)) RENAME TO \(quoted(renamed))")
        }
    }
}
