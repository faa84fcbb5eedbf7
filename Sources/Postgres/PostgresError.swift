/// Everything that can go wrong talking to PostgreSQL, with the server's own diagnostics kept.
public enum PostgresError: Error, Sendable, CustomStringConvertible {
    /// The server could not be reached or refused the connection.
    case connectionFailed(message: String)
    /// The connection broke while a statement was in flight (server restart, network).
    case connectionLost(message: String)
    /// The server answered with an error.
    case server(ServerError)
    /// No connection became free in time.
    case poolTimeout(waited: Duration)
    /// The pool is shut down.
    case poolClosed
    /// A value could not be read as the requested Swift type.
    case decoding(column: String, value: String?, as: String)
    /// libpq reported something this wrapper does not expect.
    case protocolViolation(message: String)
    /// A parameter (1-based) that cannot be sent, such as text holding a NUL byte; nothing was sent.
    case invalidParameter(index: Int, reason: String)
    /// A pipelined statement that never ran because an earlier one of its implicit transaction
    /// failed; running it again is safe.
    case pipelineAborted
    /// A commit whose outcome is not known to be durable: the connection broke during COMMIT,
    /// or the server stopped waiting for the synchronous standby (it is committed on the
    /// primary alone). Never acknowledged as it stands; an idempotent retry settles it.
    case commitUnconfirmed(message: String)

    public var description: String {
        switch self {
        case .connectionFailed(let message): return "cannot connect to PostgreSQL: \(message)"
        case .connectionLost(let message): return "PostgreSQL connection lost: \(message)"
        case .server(let error): return error.description
        case .poolTimeout(let waited): return "no database connection became free within \(waited)"
        case .poolClosed: return "the connection pool is closed"
        case .decoding(let column, let value, let type): return "column \(column): cannot read \(value ?? "NULL") as \(type)"
        case .protocolViolation(let message): return "unexpected libpq state: \(message)"
        case .invalidParameter(let index, let reason): return "parameter $\(index) \(reason)"
        case .pipelineAborted: return "not run: an earlier statement of the pipeline failed"
        case .commitUnconfirmed(let message): return "commit not confirmed: \(message)"
        }
    }

    /// The SQLSTATE of a server error, if this is one.
    public var sqlState: String? {
        if case .server(let error) = self { return error.sqlState }
        return nil
    }

    /// A description safe for logs: the kind of failure and the SQLSTATE, never the values
    /// involved (a server message or detail can quote a client's data, as in "Key (x)=(…)").
    public var logSummary: String {
        switch self {
        case .connectionFailed: return "connection_failed"
        case .connectionLost: return "connection_lost"
        case .server(let error): return "sqlstate=\(error.sqlState)" + (error.constraint.map { " constraint=\($0)" } ?? "")
        case .poolTimeout: return "pool_timeout"
        case .poolClosed: return "pool_closed"
        case .decoding(let column, _, let type): return "decoding column=\(column) as=\(type)"
        case .protocolViolation: return "protocol_violation"
        case .invalidParameter(let index, let reason): return "invalid_parameter index=\(index) \(reason)"
        case .pipelineAborted: return "pipeline_aborted"
        case .commitUnconfirmed: return "commit_unconfirmed"
        }
    }

    /// What a log line may say about any error: a database error's `logSummary`, else the
    /// error's type (a description could quote data).
    public static func logSummary(of error: any Error) -> String {
        (error as? PostgresError)?.logSummary ?? String(reflecting: type(of: error))
    }

    /// True when the statement failed for a passing reason and the same request may succeed
    /// when tried again: a statement timeout or cancellation, a serialization failure or
    /// deadlock, a lock not available, the server short of resources or shutting down.
    public var isTransient: Bool {
        guard case .server(let error) = self else { return isConnectionProblem }
        let state = error.sqlState
        // 25006: a read-only server, i.e. a primary demoted under a failover.
        return state.hasPrefix("40") || state.hasPrefix("53") || state.hasPrefix("57") || state == "55P03" || state.hasPrefix("08")
            || state == SQLState.readOnlyTransaction
    }

    /// True when the server refused a value (SQLSTATE class 22, data exception: out of range,
    /// untranslatable character, invalid text) or the wrapper refused a parameter: the input,
    /// not the server, is at fault.
    public var isInvalidInput: Bool {
        if case .invalidParameter = self { return true }
        return sqlState?.hasPrefix("22") == true
    }

    /// True when a statement's effect is unknown: the connection broke while it was on its way,
    /// or its commit is not confirmed (`commitUnconfirmed`). Running it again must be idempotent.
    public var isOutcomeUnknown: Bool {
        switch self {
        case .connectionLost, .commitUnconfirmed: return true
        case .server(let error): return ["57P01", "57P02"].contains(error.sqlState)
        default: return false
        }
    }

    /// True when the failure was about reaching the server rather than the statement itself.
    public var isConnectionProblem: Bool {
        switch self {
        case .connectionFailed, .connectionLost, .poolTimeout, .poolClosed, .commitUnconfirmed: return true
        case .server(let error):
            // Class 08 is connection exceptions; 57P01..57P03 are shutdown/cannot-connect-now.
            return error.sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(error.sqlState)
        default: return false
        }
    }
}

/// An error reported by the server (an ErrorResponse), with its SQLSTATE.
public struct ServerError: Sendable, CustomStringConvertible {
    public var sqlState: String
    public var message: String
    public var detail: String?
    public var hint: String?
    public var constraint: String?

    public var description: String {
        var text = "PostgreSQL error \(sqlState): \(message)"
        if let detail { text += " (\(detail))" }
        return text
    }
}

/// SQLSTATE codes the project reacts to.
public enum SQLState {
    public static let uniqueViolation = "23505"
    public static let serializationFailure = "40001"
    public static let deadlockDetected = "40P01"
    public static let raiseException = "P0001"
    public static let adminShutdown = "57P01"
    public static let queryCanceled = "57014"
    public static let readOnlyTransaction = "25006"
}
