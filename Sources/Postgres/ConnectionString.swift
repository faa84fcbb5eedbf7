import CLibPQ
import Foundation

/// libpq connection strings in either form libpq takes, `key=value …` or a `postgresql://` URI,
/// read by libpq itself (`PQconninfoParse`), so both mean exactly what they mean to libpq.
///
/// ```swift
/// try ConnectionString.replacingDatabase(in: "postgresql://app@db.internal:5433/sniffmeet?sslmode=require",
///                                        with: "sniffmeet_bench")
/// // "user='app' dbname='sniffmeet_bench' host='db.internal' port='5433' sslmode='require'"
/// ```
public enum ConnectionString {
    /// One setting of a connection string.
    public struct Option: Equatable, Sendable {
        /// libpq's keyword, e.g. `dbname` (a URI's parts are named the same way).
        public var keyword: String
        /// The value, unquoted.
        public var value: String
        /// A setting `keyword` = `value`.
        public init(keyword: String, value: String) {
            self.keyword = keyword
            self.value = value
        }
    }

    /// The settings `connectionString` states, in libpq's order of keywords; libpq adds no
    /// defaults here (environment variables and `.pgpass` still apply when connecting).
    /// Throws `connectionFailed` with libpq's reason for a string it cannot read.
    public static func options(of connectionString: String) throws(PostgresError) -> [Option] {
        var error: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(connectionString, &error) else {
            let reason = error.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "out of memory"
            if let error { PQfreemem(error) }
            throw .connectionFailed(message: "invalid connection string: \(reason)")
        }
        defer { PQconninfoFree(parsed) }
        var options: [Option] = []
        var cursor = parsed
        while let keyword = cursor.pointee.keyword {
            if let value = cursor.pointee.val {
                options.append(Option(keyword: String(cString: keyword), value: String(cString: value)))
            }
            cursor += 1
        }
        return options
    }

    /// `options` as a `key=value …` string, every value quoted as libpq reads it.
    public static func keywordValue(_ options: [Option]) -> String {
        options.map { option in
            let escaped = option.value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
            return "\(option.keyword)='\(escaped)'"
        }.joined(separator: " ")
    }

    /// The same connection settings with the database replaced by `database` (set when absent),
    /// as a `key=value …` string. Appending ` dbname=…` to a URI would make it unreadable.
    public static func replacingDatabase(in connectionString: String, with database: String) throws(PostgresError) -> String {
        var options = try options(of: connectionString)
        if let index = options.firstIndex(where: { $0.keyword == "dbname" }) {
            options[index].value = database
        } else {
            options.append(Option(keyword: "dbname", value: database))
        }
        return keywordValue(options)
    }
}
