import Foundation

/// Edits libpq connection strings (keyword/value or URI form).
enum ConnectionOptions {
    /// The settings of every connection a serving process opens, through libpq's `options`:
    /// `statement_timeout` (when given), so that no statement of a request runs longer than the
    /// request may take, and no parallel query. Every statement here is a point or range read
    /// of a few rows, or a write; with statistics that overestimate a stream (a generic plan
    /// guesses hundreds of rows for `stream_id = $1`), PostgreSQL planned a two-stream read as a
    /// Gather Merge over two workers: 8 ms to start them instead of 10 µs, 23 ms each under a
    /// burst of sign-ups with taken nicknames (176 answers a second). Left alone when the string
    /// already sets options: the operator's own then hold.
    static func forServing(_ connectionString: String, statementTimeoutMilliseconds: Int? = nil) -> String {
        guard !connectionString.contains("options") else { return connectionString }
        var settings = ["max_parallel_workers_per_gather=0"]
        if let statementTimeoutMilliseconds { settings.insert("statement_timeout=\(statementTimeoutMilliseconds)", at: 0) }
        if connectionString.hasPrefix("postgres://") || connectionString.hasPrefix("postgresql://") {
            let separator = connectionString.contains("?") ? "&" : "?"
            let options = settings.map { "-c%20" + $0.replacingOccurrences(of: "=", with: "%3D") }.joined(separator: "%20")
            return connectionString + separator + "options=" + options
        }
        return connectionString + " options='" + settings.map { "-c " + $0 }.joined(separator: " ") + "'"
    }
}
