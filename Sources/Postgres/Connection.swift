import CLibPQ
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One libpq connection.
///
/// Deliberately not `Sendable`: a connection is owned by one thread at a time (a pool lease's
/// serial queue, or a listener's own thread), and every call on it blocks that thread, never a
/// Swift concurrency thread.
public final class Connection {
    let handle: OpaquePointer
    /// Server-side prepared statements of this session, by SQL text.
    private(set) var preparedStatements: [String: Prepared] = [:]
    /// Every statement is prepared, not only those marked `prepared`: for a connection that runs
    /// one fixed set of statements over and over (the projectors', which also set
    /// `plan_cache_mode` so each is planned once), where planning cost more than some statements'
    /// execution. At most `maxPrepared` texts are kept; past that, unmarked statements run unprepared.
    public var preparesEveryStatement = false
    static let maxPrepared = 512
    /// What the notice receiver saw; owned by this connection, read on its thread.
    private let notices = NoticeLog()
    /// Set when the session must not be used again although libpq still calls it good: it
    /// ended up on a read-only server (a demoted primary) or lost a commit's outcome.
    public private(set) var isPoisoned = false

    /// Opens a connection with any libpq connection string or URI; `PG*` environment variables
    /// and `.pgpass` apply as in psql. Blocks.
    public init(connectionString: String) throws {
        guard let handle = PQconnectdb(connectionString) else {
            throw PostgresError.connectionFailed(message: "out of memory")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.errorMessage(handle)
            PQfinish(handle)
            throw PostgresError.connectionFailed(message: message)
        }
        self.handle = handle
        // Warnings arrive as notices, outside any result: the one that matters here is the
        // server's word that a commit was cut while waiting for the synchronous standby.
        PQsetNoticeReceiver(handle, noticeReceiver, Unmanaged.passUnretained(notices).toOpaque())
        // Timestamps are parsed as ISO UTC; set it here so no caller depends on server defaults.
        _ = try execute("SELECT set_config('TimeZone', 'UTC', false), set_config('DateStyle', 'ISO', false)")
    }

    deinit { PQfinish(handle) }

    /// False once the server went away or the socket broke; such a connection is thrown away.
    public var isUsable: Bool { !isPoisoned && PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// True outside any transaction (an autocommit statement commits by itself).
    public var isIdle: Bool { PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// Checks without a round trip whether an idle connection was closed by the server
    /// (restart, `pg_terminate_backend`): a closed socket is readable, and consuming it marks
    /// the connection bad.
    public func isAliveWhenIdle() -> Bool {
        guard PQstatus(handle) == CONNECTION_OK else { return false }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        if ready > 0 {
            if PQconsumeInput(handle) == 0 { return false }
            if PQstatus(handle) != CONNECTION_OK { return false }
            // An idle connection may legitimately receive a notification; anything else is odd.
            let bytes = recv(PQsocket(handle), nil, 0, Int32(MSG_PEEK | MSG_DONTWAIT))
            if bytes == 0 { return false }
        }
        return true
    }

    /// The server's process id for this session.
    public var backendPID: Int32 { PQbackendPID(handle) }

    // MARK: Statements

    /// Runs one parameterized statement and returns its rows. With `prepared`, the statement is
    /// parsed and planned once per connection and reused (hot paths with a fixed SQL text).
    @discardableResult
    public func execute(_ sql: String, _ parameters: [any PostgresEncodable] = [], prepared: Bool = false) throws -> QueryResult {
        let statement = preparing(sql, marked: prepared) ? try prepare(sql, parameterCount: parameters.count) : nil
        let encoded = try Self.encode(parameters, for: statement)
        let result = Self.withParameters(encoded) { values, lengths, formats in
            if let statement { return PQexecPrepared(handle, statement.name, Int32(values.count), values, lengths, formats, 0) }
            return PQexecParams(handle, sql, Int32(values.count), nil, values, lengths, formats, 0)
        }
        let checked = try check(result)
        try checkCommitOutcome()
        return checked
    }

    /// Whether `sql` runs as a prepared statement here.
    private func preparing(_ sql: String, marked: Bool) -> Bool {
        marked || (preparesEveryStatement && (preparedStatements.count < Self.maxPrepared || preparedStatements[sql] != nil))
    }

    /// A statement prepared in this session: its name, and for each parameter that is an array
    /// of a type this client writes in binary, that element type (`BinaryArray`).
    struct Prepared {
        let name: String
        let arrayElementTypes: [UInt32?]
    }

    /// Prepares `sql` once per session, and learns the types PostgreSQL gave its parameters
    /// (one more round trip, once): array parameters then travel in binary.
    private func prepare(_ sql: String, parameterCount: Int) throws -> Prepared {
        if let known = preparedStatements[sql] { return known }
        let name = "sm_\(preparedStatements.count + 1)"
        _ = try check(PQprepare(handle, name, sql, Int32(parameterCount), nil))
        let described = try check(PQdescribePrepared(handle, name))
        let types = (0..<Int32(PQnparams(described.result))).map { PQparamtype(described.result, $0) }
        let statement = Prepared(name: name, arrayElementTypes: types.map { BinaryArray.elementType(ofArray: $0) })
        preparedStatements[sql] = statement
        return statement
    }

    /// Runs a trusted multi-statement script (migration files); never for user input.
    public func executeScript(_ sql: String) throws {
        _ = try check(PQexec(handle, sql))
        try checkCommitOutcome()
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// The COMMIT runs without `statement_timeout`: a timeout that cancels a commit's wait for
    /// the synchronous standby leaves it committed on the primary alone, so the wait is left to
    /// finish (or to be cut, which `commitUnconfirmed` reports).
    public func transaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body(self)
            try commitWithoutTimeout()
            return value
        } catch {
            if PQstatus(handle) == CONNECTION_OK { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// `SET LOCAL statement_timeout = 0` then `COMMIT`, in one round trip. A failure here
    /// leaves the outcome unknown when the connection broke: reported as `commitUnconfirmed`.
    private func commitWithoutTimeout() throws {
        do {
            _ = try pipeline([Statement(Self.noTimeoutSQL), Statement("COMMIT")])
        } catch let error as PostgresError where error.isConnectionProblem {
            isPoisoned = true
            throw PostgresError.commitUnconfirmed(message: "connection lost during COMMIT: \(error.logSummary)")
        }
    }

    /// Lifts `statement_timeout` for the rest of the current transaction; a later statement of
    /// the same transaction (or the COMMIT) then runs, and waits for the standby, without it.
    static let noTimeoutSQL = "SELECT set_config('statement_timeout', '0', true)"

    /// Throws `commitUnconfirmed` when the server warned that a commit stopped waiting for the
    /// synchronous standby since the last check (cancel, timeout, shutdown): it is committed
    /// here and possibly nowhere else, so it may not be acknowledged as it stands.
    public func checkCommitOutcome() throws {
        guard let warning = notices.takeSyncReplicationWarning() else { return }
        isPoisoned = true
        throw PostgresError.commitUnconfirmed(message: warning)
    }

    // MARK: Pipeline

    /// One statement of a pipeline.
    public struct Statement: Sendable {
        public var sql: String
        public var parameters: [any PostgresEncodable]
        /// Parse and plan once per connection (see `execute(_:_:prepared:)`).
        public var prepared: Bool
        public init(_ sql: String, _ parameters: [any PostgresEncodable] = [], prepared: Bool = false) {
            self.sql = sql
            self.parameters = parameters
            self.prepared = prepared
        }

        /// True when a parameter is an array (see `PostgresEncodable.isArray`).
        public var takesArrays: Bool { parameters.contains { type(of: $0).isArray } }
    }

    /// Sends all statements in libpq pipeline mode and reads the results afterwards: one
    /// network round trip per chunk instead of one per statement. Outside an explicit
    /// transaction each statement commits on its own; inside one, a failure aborts the rest.
    /// Throws the first error after reading every result.
    ///
    /// With `syncEach`, every statement is its own implicit transaction (a sync point after
    /// each), so one failing statement does not abort the others.
    public func pipeline(_ statements: [Statement], syncEach: Bool = false, chunkSize: Int = 256) throws -> [QueryResult] {
        var results: [QueryResult] = []
        results.reserveCapacity(statements.count)
        var start = 0
        while start < statements.count {
            let chunk = statements[start..<min(start + chunkSize, statements.count)]
            results += try pipelineChunk(chunk, syncEach: syncEach)
            start += chunkSize
        }
        return results
    }

    private func pipelineChunk(_ statements: ArraySlice<Statement>, syncEach: Bool) throws -> [QueryResult] {
        var results: [QueryResult] = []
        results.reserveCapacity(statements.count)
        var firstError: PostgresError?
        for outcome in try pipelineOutcomes(statements, syncEach: syncEach) {
            switch outcome {
            case .success(let result): results.append(result)
            case .failure(let error): firstError = firstError ?? error
            }
        }
        try checkCommitOutcome()
        if let firstError { throw firstError }
        return results
    }

    /// Every statement's own outcome: its rows, its error, or `pipelineAborted` when an earlier
    /// statement of the same implicit transaction failed (it was never run; it may run again).
    /// Throws only when nothing could be sent or the connection broke on the way.
    func pipelineOutcomes<Statements: Collection<Statement>>(
        _ statements: Statements,
        syncEach: Bool
    ) throws -> [Result<QueryResult, PostgresError>] {
        // Preparing is a round trip of its own; it happens once per connection and statement.
        let prepared = try statements.map {
            preparing($0.sql, marked: $0.prepared) ? try prepare($0.sql, parameterCount: $0.parameters.count) : nil
        }
        // Encoded once, and refused before the first send: a pipeline cut short cannot be left cleanly.
        let encoded = try zip(statements, prepared).map { try Self.encode($0.parameters, for: $1) }
        guard PQenterPipelineMode(handle) == 1 else { throw lostOrProtocol("cannot enter pipeline mode") }
        defer { PQexitPipelineMode(handle) }
        for ((statement, prepared), parameters) in zip(zip(statements, prepared), encoded) {
            let sent = Self.withParameters(parameters) { values, lengths, formats in
                if let prepared {
                    return PQsendQueryPrepared(handle, prepared.name, Int32(values.count), values, lengths, formats, 0)
                }
                return PQsendQueryParams(handle, statement.sql, Int32(values.count), nil, values, lengths, formats, 0)
            }
            guard sent == 1 else { throw lostOrProtocol("cannot send pipelined statement") }
            if syncEach { guard PQpipelineSync(handle) == 1 else { throw lostOrProtocol("cannot sync pipeline") } }
        }
        if !syncEach { guard PQpipelineSync(handle) == 1 else { throw lostOrProtocol("cannot sync pipeline") } }
        var outcomes: [Result<QueryResult, PostgresError>] = []
        outcomes.reserveCapacity(statements.count)
        for _ in statements {
            guard let raw = PQgetResult(handle) else { throw lostOrProtocol("pipeline ended early") }
            let result = QueryResult(raw)
            // Each statement's result is followed by a NULL separator.
            while let extra = PQgetResult(handle) { PQclear(extra) }
            if PQresultStatus(raw) == PGRES_PIPELINE_ABORTED {
                outcomes.append(.failure(.pipelineAborted))
            } else if let error = resultError(raw) {
                outcomes.append(.failure(error))
            } else {
                outcomes.append(.success(result))
            }
            if syncEach, let sync = PQgetResult(handle) { PQclear(sync) }
        }
        // The sync point.
        if !syncEach, let sync = PQgetResult(handle) { PQclear(sync) }
        return outcomes
    }

    // MARK: COPY

    /// `COPY … FROM STDIN`: streams the chunks to the server; returns the rows copied.
    @discardableResult
    public func copyIn<Chunks: Sequence>(_ sql: String, _ chunks: Chunks) throws -> Int where Chunks.Element == Data {
        let start = PQexec(handle, sql)
        defer { PQclear(start) }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            if let error = resultError(start) { throw error }
            throw lostOrProtocol("COPY did not start")
        }
        var failure: String?
        for chunk in chunks where !chunk.isEmpty {
            let sent = chunk.withUnsafeBytes { buffer in
                PQputCopyData(handle, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(buffer.count))
            }
            if sent != 1 {
                failure = Self.errorMessage(handle)
                break
            }
        }
        guard PQputCopyEnd(handle, failure) == 1 else { throw lostOrProtocol("cannot end COPY") }
        let result = try check(PQgetResult(handle))
        while let extra = PQgetResult(handle) { PQclear(extra) }
        return result.affectedRows
    }

    /// `COPY … TO STDOUT`: hands each row's bytes (one line of text or CSV) to `consume`.
    public func copyOut(_ sql: String, _ consume: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        let start = PQexec(handle, sql)
        defer { PQclear(start) }
        guard PQresultStatus(start) == PGRES_COPY_OUT else {
            if let error = resultError(start) { throw error }
            throw lostOrProtocol("COPY did not start")
        }
        var consumerError: (any Error)?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(handle, &buffer, 0)
            if length == -1 { break }
            if length == -2 { throw lostOrProtocol("COPY failed") }
            if let buffer {
                if consumerError == nil {
                    do {
                        try buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                            try consume(UnsafeBufferPointer(start: $0, count: Int(length)))
                        }
                    } catch { consumerError = error }
                }
                PQfreemem(buffer)
            }
        }
        _ = try check(PQgetResult(handle))
        while let extra = PQgetResult(handle) { PQclear(extra) }
        if let consumerError { throw consumerError }
    }

    // MARK: LISTEN / NOTIFY

    /// One asynchronous notification.
    public struct Notification: Sendable {
        public var channel: String
        public var payload: String
        public var senderPID: Int32
    }

    /// Starts listening on `channel` (a plain identifier).
    public func listen(_ channel: String) throws {
        precondition(channel.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }, "channel must be an identifier")
        try execute("LISTEN \(channel)")
    }

    /// Waits up to `timeout` for notifications and returns those that arrived (maybe none).
    public func waitForNotifications(timeout: Duration) throws -> [Notification] {
        var received = drainNotifications()
        if !received.isEmpty { return received }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 && errno != EINTR { throw lostOrProtocol("poll failed") }
        if ready > 0 {
            guard PQconsumeInput(handle) == 1 else { throw PostgresError.connectionLost(message: Self.errorMessage(handle)) }
        }
        received = drainNotifications()
        if PQstatus(handle) != CONNECTION_OK { throw PostgresError.connectionLost(message: Self.errorMessage(handle)) }
        return received
    }

    private func drainNotifications() -> [Notification] {
        var received: [Notification] = []
        while let notify = PQnotifies(handle) {
            received.append(
                Notification(
                    channel: String(cString: notify.pointee.relname),
                    payload: String(cString: notify.pointee.extra),
                    senderPID: notify.pointee.be_pid
                )
            )
            PQfreemem(notify)
        }
        return received
    }

    // MARK: Helpers

    /// A parameter as it travels: text (NULL as nil), or an array in binary.
    enum EncodedParameter {
        case text(String?)
        case binary([UInt8])
    }

    /// `parameters` as they travel: arrays in binary where `statement` declares an array of
    /// their element type, everything else as text. A NUL byte in any text (PostgreSQL's text
    /// cannot hold one, and a C string would be cut short there) is refused before sending.
    static func encode(_ parameters: [any PostgresEncodable], for statement: Prepared?) throws -> [EncodedParameter] {
        try parameters.indices.map { index in
            let parameter = parameters[index]
            if let statement, index < statement.arrayElementTypes.count, let elementType = statement.arrayElementTypes[index],
                let array = parameter.binaryArray(of: elementType)
            {
                guard !array.containsNUL else { throw PostgresError.invalidParameter(index: index + 1, reason: "contains a NUL byte") }
                return .binary(array.bytes)
            }
            let text = parameter.postgresText
            if let text, containsNUL(text) { throw PostgresError.invalidParameter(index: index + 1, reason: "contains a NUL byte") }
            return .text(text)
        }
    }

    /// `memchr` over the contiguous UTF-8 (a byte-by-byte `contains` on the view was 1 % of the
    /// server's CPU per SendWalk: every parameter of every statement, events' JSON included).
    private static func containsNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
    }

    /// The parameters as libpq takes them: values (C strings for text), lengths and formats
    /// (0 text, 1 binary), alive for the duration of `body`.
    private static func withParameters<R>(
        _ parameters: [EncodedParameter],
        _ body: ([UnsafePointer<CChar>?], [Int32], [Int32]) throws -> R
    ) rethrows -> R {
        var lengths = [Int32](repeating: 0, count: parameters.count)
        var formats = [Int32](repeating: 0, count: parameters.count)
        let pointers: [UnsafeMutablePointer<CChar>?] = parameters.indices.map { index in
            switch parameters[index] {
            case .text(let text):
                return text.flatMap { strdup($0) }
            case .binary(let bytes):
                lengths[index] = Int32(bytes.count)
                formats[index] = 1
                let copy = malloc(max(1, bytes.count))!
                bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                return copy.assumingMemoryBound(to: CChar.self)
            }
        }
        defer { for pointer in pointers { free(pointer) } }
        return try body(pointers.map { UnsafePointer($0) }, lengths, formats)
    }

    private func check(_ raw: OpaquePointer?) throws -> QueryResult {
        let result = QueryResult(raw)
        if let error = resultError(raw) { throw error }
        return result
    }

    /// The error a result carries, or nil for success.
    private func resultError(_ raw: OpaquePointer?) -> PostgresError? {
        guard let raw else { return lostOrProtocol("no result") }
        switch PQresultStatus(raw) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_EMPTY_QUERY, PGRES_PIPELINE_SYNC:
            return nil
        default:
            func field(_ code: Int32) -> String? {
                PQresultErrorField(raw, code).map { String(cString: $0) }
            }
            guard let state = field(Int32(UInt8(ascii: "C"))) else {
                // No SQLSTATE: libpq itself failed, which means the connection is gone.
                return .connectionLost(
                    message: PQresultErrorMessage(raw).map { String(cString: $0) }?
                        .trimmingCharacters(in: .whitespacesAndNewlines) ?? Self.errorMessage(handle)
                )
            }
            if Self.poisoningStates.contains(state) { isPoisoned = true }
            return .server(
                ServerError(
                    sqlState: state,
                    message: field(Int32(UInt8(ascii: "M"))) ?? "",
                    detail: field(Int32(UInt8(ascii: "D"))),
                    hint: field(Int32(UInt8(ascii: "H"))),
                    constraint: field(Int32(UInt8(ascii: "n")))
                )
            )
        }
    }

    /// A read-only server (a primary demoted under us, a standby) and an administrator's
    /// shutdown or termination: the session is finished for our purposes.
    static let poisoningStates: Set<String> = [SQLState.readOnlyTransaction, "57P01", "57P02", "57P03"]

    private func lostOrProtocol(_ what: String) -> PostgresError {
        if PQstatus(handle) != CONNECTION_OK { return .connectionLost(message: Self.errorMessage(handle)) }
        return .protocolViolation(message: "\(what): \(Self.errorMessage(handle))")
    }

    static func errorMessage(_ handle: OpaquePointer) -> String {
        PQerrorMessage(handle).map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown error"
    }
}

/// Notices of one connection, written by libpq's notice receiver on the connection's thread.
final class NoticeLog {
    private var syncReplicationWarning: String?

    func record(severity: String, message: String) {
        // syncrep.c: "canceling wait for synchronous replication due to user request" and
        // "canceling the wait for synchronous replication and terminating connection due to
        // administrator command", each with "The transaction has already committed locally".
        if severity == "WARNING", message.contains("synchronous replication") { syncReplicationWarning = message }
    }

    func takeSyncReplicationWarning() -> String? {
        defer { syncReplicationWarning = nil }
        return syncReplicationWarning
    }
}

/// libpq's notice receiver: a C function, so the log travels as the opaque argument.
private func noticeReceiver(_ argument: UnsafeMutableRawPointer?, _ result: OpaquePointer?) {
    guard let argument, let result else { return }
    let log = Unmanaged<NoticeLog>.fromOpaque(argument).takeUnretainedValue()
    func field(_ code: Character) -> String {
        PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) } ?? ""
    }
    // "V" is the severity never localized.
    log.record(severity: field("V"), message: field("M"))
}
