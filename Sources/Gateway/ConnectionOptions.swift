import Foundation

/// Edits libpq connection strings (keyword/value or URI form).
enum ConnectionOptions {
    /// Adds `statement_timeout` through libpq's `options`, so that no statement of a request
    /// runs longer than the request may take. Left alone when the string already sets options.
    static func withStatementTimeout(_ connectionString: String, milliseconds: Int) -> String {
        guard !connectionString.contains("options") else { return connectionString }
        if connectionString.hasPrefix("postgres://") || connectionString.hasPrefix("postgresql://") {
            let separator = connectionString.contains("?") ? "&" : "?"
            return connectionString + separator + "options=-c%20statement_timeout%3D\(milliseconds)"
        }
        return connectionString + " options='-c statement_timeout=\(milliseconds)'"
    }
}
