import Crypto
import Foundation
import Postgres

/// Appending: one round trip, one transaction.
///
/// - Transaction-scoped advisory locks on every stream involved come first, in key order (no
///   deadlocks), in one statement: exclusive for streams written, shared for streams only read
///   (SendWalk's pair stream, a condition of the append). While a transaction holds them no
///   other appender can write those streams, so the insert that follows sees every earlier
///   writer committed. Every append takes them: a condition is only as good as the writers that
///   respect it (an Unpair without a lock could commit between a SendWalk's check and its
///   commit). Locks write nothing to disk, and under group commit a whole batch shares one
///   lock statement.
/// - One `INSERT … SELECT` that writes the events only if every expected version still holds
///   and no written stream's head comes from a younger transaction (a transaction's id is fixed
///   at its first write; writing after a younger writer would put this version before theirs in
///   the feed). The unique (stream, version) and event-id indexes back both checks up.
///
/// Idempotency costs nothing extra: a command's event ids derive from its command id, so a
/// retry hits the unique event-id index and gets the first append's positions back.
extension EventLog {
    /// Appends the events of one command to one or more streams in one transaction, shared
    /// with concurrent appends (`GroupCommit`).
    ///
    /// `expectations` names every stream the command read or writes with the version it saw;
    /// a stream that is only read is a condition (the append fails if it moved). A retried
    /// `commandID` returns the first append's positions and writes nothing.
    public func append(commandID: UUID?, expectations: [String: ExpectedVersion], events: [NewEvent]) async throws -> AppendResult {
        try await append(AppendRequest(commandID: commandID, expectations: expectations, events: events)).appended
    }

    /// Appends as `append(commandID:expectations:events:)` and reads `request.reads` in the
    /// same transaction.
    public func append(_ request: AppendRequest) async throws -> GroupAppendResult {
        let result = try await groupCommit.append(request)
        if !result.appended.replayed { announceCommitted() }
        return result
    }

    /// Appends inside the caller's open transaction on `connection` (for commands that write
    /// other tables atomically with their events); the caller announces after commit
    /// (`announceCommitted()`). A retried command id throws `alreadyAppended`: the transaction
    /// is aborted, roll it back and look the first run up.
    public static func append(
        on connection: Connection,
        commandID: UUID?,
        expectations: [String: ExpectedVersion],
        events: [NewEvent]
    ) throws -> AppendResult {
        let plan = AppendPlan(commandID: commandID, expectations: expectations, events: events)
        do {
            return try plan.run(on: connection)
        } catch EventLogError.versionConflict(let stream, let message) where stream.isEmpty {
            // Nothing was inserted and the transaction is intact: find the stream to name.
            throw EventLogError.versionConflict(stream: try plan.conflictingStream(on: connection), message: message)
        }
    }

    /// The condition of a guarded write (`GuardedRow`): the event whose id is `eventID` (an SQL
    /// expression) was appended by this very transaction (so a write under it commits with the
    /// events, and writes nothing when the append's condition failed). Other modules use it as
    /// `GuardedTable.rowAppendedHere`.
    static func appendedHere(_ eventID: String) -> String {
        "EXISTS (SELECT 1 FROM events WHERE event_id = \(eventID) AND transaction_id = pg_current_xact_id())"
    }

    /// For a guarded write that must hold whenever its append wrote (spending a drop token that
    /// another request may have spent since it was read): `CASE WHEN … THEN … ELSE
    /// \(EventLog.guardFailed("why")) END` fails the whole transaction (schema 0030); the batch's
    /// appends then run alone, and this one's command runs again on fresh state.
    public static func guardFailed(_ reason: String) -> String {
        "append_guard_failed('\(reason.replacingOccurrences(of: "'", with: "''"))')"
    }

    /// The ids the events of a command are stored under. With a command id they are derived from
    /// it (a retry carries the same ids, which is how the log recognizes it); without one, the
    /// events' own ids.
    public static func eventIDs(commandID: UUID?, events: [NewEvent]) -> [UUID] {
        guard let commandID else { return events.map(\.id) }
        return eventIDs(commandID: commandID, count: events.count)
    }

    /// The ids of the first `count` events of a command.
    ///
    /// The i-th is derived from the command id's 16 bytes and i as 4 big-endian bytes, hashed
    /// from the stack (a command derives its ids twice; arrays for them were about 2 % of a walk
    /// request's allocations).
    public static func eventIDs(commandID: UUID, count: Int) -> [UUID] {
        (0..<count).map { index in
            let input = (commandID.uuid, UInt32(index).bigEndian)
            return withUnsafeBytes(of: input) { derivedUUID(UnsafeRawBufferPointer(rebasing: $0[..<20])) }
        }
    }

    /// A UUID (version 8, RFC 4122 variant) that is a function of `bytes`: the same input gives
    /// the same id in every process, which is what makes retries recognizable. The project's one
    /// derived-id function: event ids, idempotent command ids and the walk expiry's command ids.
    public static func derivedUUID(_ bytes: [UInt8]) -> UUID {
        bytes.withUnsafeBytes { derivedUUID($0) }
    }

    /// `derivedUUID(_:)` of bytes in memory.
    public static func derivedUUID(_ bytes: UnsafeRawBufferPointer) -> UUID {
        var hash = SHA256()
        hash.update(bufferPointer: bytes)
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        hash.finalize().withUnsafeBytes { digest in
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: digest[..<16])) }
        }
        uuid.6 = (uuid.6 & 0x0F) | 0x80
        uuid.8 = (uuid.8 & 0x3F) | 0x80
        return UUID(uuid: uuid)
    }
}

/// The statements of one append.
struct AppendPlan {
    let ids: [UUID]
    let events: [NewEvent]
    let expectations: [String: ExpectedVersion]
    let writtenStreams: [String]

    init(commandID: UUID?, expectations: [String: ExpectedVersion], events: [NewEvent]) {
        self.ids = EventLog.eventIDs(commandID: commandID, events: events)
        self.events = events
        self.expectations = expectations
        var written: [String] = []
        for event in events where !written.contains(event.stream) { written.append(event.stream) }
        self.writtenStreams = written
    }

    /// The append's plan does not depend on its parameters, but the planner, seeing array
    /// parameters, would otherwise plan it afresh on every execution (measured: half the
    /// server's CPU under `bench append`). Local to the (implicit) transaction.
    static let genericPlanSQL = "SELECT \(genericPlanSetting)"

    /// The setting itself, for statements that make it beside their own work.
    private static let genericPlanSetting = "set_config('plan_cache_mode', 'force_generic_plan', true)"

    static let lockSQL = lockSQL(genericPlans: false)

    /// The locks of an implicit transaction (the pipeline is the whole transaction), setting
    /// `genericPlanSQL`'s plan mode for the rest of it in the same statement: one statement fewer
    /// per batch. (Nothing needs lifting `statement_timeout` there: PostgreSQL stops the timer
    /// at the sync point before the implicit commit, so that commit waits for the synchronous
    /// standby without it; `SyncCommitTests` holds it to that.)
    static let lockWithGenericPlansSQL = lockSQL(genericPlans: true)

    /// Every stream's advisory lock in key order; with `genericPlans`, the setting first (an
    /// initplan, run once whatever the rows).
    private static func lockSQL(genericPlans: Bool) -> String {
        let setting = genericPlans ? "\n      WHERE (SELECT \(genericPlanSetting)) IS NOT NULL" : ""
        return """
            SELECT CASE WHEN t.read_only THEN pg_advisory_xact_lock_shared(t.key) ELSE pg_advisory_xact_lock(t.key) END
            FROM (SELECT hashtextextended(s.stream_id, 7336) AS key, bool_and(s.read_only) AS read_only
                  FROM unnest($1::text[], $2::bool[]) AS s(stream_id, read_only)\(setting) GROUP BY 1 ORDER BY 1) AS t
            """
    }

    /// `insertSQL` for one event on one stream, with at most one read-only condition stream
    /// (`$7`, at version `$8`; NULL for none).
    static let singleEventSQL = singleEventSQL(conditioned: true)

    /// `singleEventSQL` without a condition stream: its empty lateral join is still a plan node
    /// to start and end on every execution.
    static let singleEventUnconditionedSQL = singleEventSQL(conditioned: false)

    private static func singleEventSQL(conditioned: Bool) -> String {
        let condition =
            conditioned
            ? """

            LEFT JOIN LATERAL (SELECT ev.stream_version FROM events ev
                               WHERE ev.stream_id = $7::text ORDER BY ev.stream_version DESC LIMIT 1) AS condition ON true
            """ : ""
        let check = conditioned ? "\n  AND ($7::text IS NULL OR $8::bigint IS NULL OR coalesce(condition.stream_version, 0) = $8)" : ""
        return """
            INSERT INTO events (stream_id, stream_version, event_id, event_type, data, metadata)
            SELECT $1::text, coalesce(head.stream_version, 0) + 1, $2::uuid, $3::text, $4::jsonb, $5::jsonb
            FROM (SELECT) AS one
            LEFT JOIN LATERAL (SELECT ev.stream_version, ev.transaction_id FROM events ev
                               WHERE ev.stream_id = $1::text ORDER BY ev.stream_version DESC LIMIT 1) AS head ON true\(condition)
            WHERE ($6::bigint IS NULL OR coalesce(head.stream_version, 0) = $6)\(check)
              AND NOT coalesce(head.transaction_id > pg_current_xact_id(), false)
            RETURNING position, transaction_id, event_id
            """
    }

    /// The insert of one or more appends (a batch's appends of several events share one: one
    /// executor start, one array of each column and one generic plan for all of them). One
    /// index probe per stream and append finds its head (version and writer); every check and
    /// every new version derives from it. Each append keeps its own conditions and writes all
    /// its events or none (`$1` and `$8` number the appends); every head is read before anything
    /// is written, so no two of the appends may share a stream that one of them writes
    /// (`AppendPlan.sharing` sees to that).
    static let insertSQL = """
        WITH heads AS MATERIALIZED (
            SELECT s.append_no, s.stream_id, s.expected, s.written, h.stream_version AS version, h.transaction_id AS writer
            FROM unnest($8::bigint[], $9::text[], $10::bigint[], $11::bool[]) AS s(append_no, stream_id, expected, written)
            LEFT JOIN LATERAL (SELECT ev.stream_version, ev.transaction_id FROM events ev
                               WHERE ev.stream_id = s.stream_id ORDER BY ev.stream_version DESC LIMIT 1) AS h ON true
        )
        INSERT INTO events (stream_id, stream_version, event_id, event_type, data, metadata)
        SELECT e.stream_id, coalesce(hd.version, 0) + e.seq, e.event_id, e.event_type, e.data, e.metadata
        FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::uuid[], $5::text[], $6::jsonb[], $7::jsonb[])
                 WITH ORDINALITY AS e(append_no, stream_id, seq, event_id, event_type, data, metadata, ord)
        JOIN heads hd ON hd.append_no = e.append_no AND hd.stream_id = e.stream_id
        WHERE NOT EXISTS (SELECT 1 FROM heads c
                          WHERE c.append_no = e.append_no
                            AND ((c.expected IS NOT NULL AND coalesce(c.version, 0) <> c.expected)
                                 OR (c.written AND c.writer > pg_current_xact_id())))
        ORDER BY e.ord
        RETURNING position, transaction_id, event_id
        """

    /// `plans`' inserts as one statement (`insertSQL`); their results come from
    /// `results(of:for:)`.
    static func insertStatement(for plans: [AppendPlan]) -> Connection.Statement {
        // Per event: its append, stream, rank within its stream (its version is the head plus the
        // rank), id, type, data, metadata.
        var appendNumbers: [Int64] = []
        var streams: [String] = []
        var ranks: [Int64] = []
        var ids: [UUID] = []
        var types: [String] = []
        var data: [JSONB] = []
        var metadata: [JSONB] = []
        // Per append and stream it involves: the head's expected version, whether it is written.
        var headAppends: [Int64] = []
        var headStreams: [String] = []
        var expected: [Int64?] = []
        var written: [Bool] = []
        // Sized once: grown append by append, the eleven arrays of a batch of fourteen walks were
        // reallocated about fifty times.
        let eventCount = plans.reduce(0) { $0 + $1.events.count }
        let headCount = plans.reduce(0) { $0 + $1.expectations.count }
        appendNumbers.reserveCapacity(eventCount)
        streams.reserveCapacity(eventCount)
        ranks.reserveCapacity(eventCount)
        ids.reserveCapacity(eventCount)
        types.reserveCapacity(eventCount)
        data.reserveCapacity(eventCount)
        metadata.reserveCapacity(eventCount)
        headAppends.reserveCapacity(headCount)
        headStreams.reserveCapacity(headCount)
        expected.reserveCapacity(headCount)
        written.reserveCapacity(headCount)
        for (number, plan) in plans.enumerated() {
            var seen: [String: Int64] = [:]
            for (event, id) in zip(plan.events, plan.ids) {
                let rank = (seen[event.stream] ?? 0) + 1
                seen[event.stream] = rank
                appendNumbers.append(Int64(number))
                streams.append(event.stream)
                ranks.append(rank)
                ids.append(id)
                types.append(event.type)
                data.append(JSONB(event.data))
                metadata.append(JSONB(event.metadata))
            }
            for stream in plan.expectations.keys.sorted() {
                headAppends.append(Int64(number))
                headStreams.append(stream)
                expected.append(plan.expectations[stream]!.parameter)
                written.append(plan.writtenStreams.contains(stream))
            }
        }
        return Connection.Statement(
            insertSQL,
            [appendNumbers, streams, ranks, ids, types, data, metadata, headAppends, headStreams, expected, written],
            prepared: true
        )
    }

    /// Each plan's result from the rows of their shared insert, nil for one whose condition failed.
    static func results(of inserted: QueryResult, for plans: [AppendPlan]) throws -> [AppendResult?] {
        var byID: [UUID: LogPosition] = [:]
        byID.reserveCapacity(inserted.count)
        for row in inserted.rows {
            byID[try row.uuid(2)] = LogPosition(transactionID: try row.uint64(1), position: try row.int64(0))
        }
        return plans.map { plan in
            let positions = plan.ids.compactMap { byID[$0] }
            guard positions.count == plan.ids.count else { return nil }
            return AppendResult(positions: positions, eventIDs: plan.ids, replayed: false)
        }
    }

    /// Splits a batch's plans (by index) into those that share one `insertSQL` and the rest,
    /// which go after it, each in its own insert. A plan whose streams an earlier sharer writes,
    /// or that writes a stream an earlier sharer reads or writes, goes after it: its insert sees
    /// the shared one's events (and mostly fails its condition on them, as it would have anyway).
    ///
    /// Single-event appends share too when there are others to share with. Their scalar insert
    /// executes no faster per event than the shared one, but each statement costs PostgreSQL a
    /// bind, a portal and an executor start and end (which `pg_stat_statements` does not count):
    /// in eight alternating `scripts/bench-http` runs PostgreSQL's CPU per walk request went from
    /// a median of 0.152 ms to 0.129 ms (docs/benchmarks.md). A lone single-event plan keeps its
    /// scalar insert, which needs no arrays and no plan setting.
    static func sharing(_ plans: [AppendPlan]) -> (shared: [Int], after: [Int]) {
        var shared: [Int] = []
        var after: [Int] = []
        var written: Set<String> = []
        var touched: Set<String> = []
        for (index, plan) in plans.enumerated() {
            let streams = plan.expectations.keys
            if streams.contains(where: written.contains) || plan.writtenStreams.contains(where: touched.contains) {
                after.append(index)
                continue
            }
            shared.append(index)
            written.formUnion(plan.writtenStreams)
            touched.formUnion(streams)
        }
        if shared.count == 1, plans[shared[0]].insertShape != nil { return ([], (shared + after).sorted()) }
        return (shared, after)
    }

    /// Checks the plan before any statement is built.
    func validate() throws {
        guard !events.isEmpty else { throw EventLogError.invalidAppend("an append needs at least one event") }
        guard events.allSatisfy({ expectations[$0.stream] != nil }) else {
            throw EventLogError.invalidAppend("every written stream must be listed with its expected version")
        }
    }

    /// Every stream of the plan with whether it is only read (a condition), for the locks.
    var lockedStreams: [(stream: String, readOnly: Bool)] {
        expectations.keys.sorted().map { ($0, !writtenStreams.contains($0)) }
    }

    /// One written stream's lock with scalar parameters: `lockSQL`'s arrays, grouping and sort
    /// cost a lone writer about a tenth of its appends per second (pgbench, the two statements
    /// as the log sends them, one client).
    static let oneStreamLockSQL = oneStreamLockSQL(genericPlans: false)

    /// `oneStreamLockSQL` setting generic plans as `lockWithGenericPlansSQL` does.
    static let oneStreamLockWithGenericPlansSQL = oneStreamLockSQL(genericPlans: true)

    private static func oneStreamLockSQL(genericPlans: Bool) -> String {
        let setting = genericPlans ? " WHERE (SELECT \(genericPlanSetting)) IS NOT NULL" : ""
        return "SELECT pg_advisory_xact_lock(hashtextextended($1::text, 7336))\(setting)"
    }

    /// The advisory locks of one or more plans, in key order, in one statement; `genericPlans`
    /// for an implicit transaction (`lockWithGenericPlansSQL`).
    static func lockStatement(_ streams: [(stream: String, readOnly: Bool)], genericPlans: Bool) -> Connection.Statement {
        if streams.count == 1, !streams[0].readOnly {
            return Connection.Statement(
                genericPlans ? oneStreamLockWithGenericPlansSQL : oneStreamLockSQL,
                [streams[0].stream],
                prepared: true
            )
        }
        return Connection.Statement(
            genericPlans ? lockWithGenericPlansSQL : lockSQL,
            [streams.map(\.stream), streams.map(\.readOnly)],
            prepared: true
        )
    }

    /// The common shape, one event on one stream with at most one read-only condition, inserted
    /// on its own (alone, or after a batch's shared insert) with scalar parameters: the planner
    /// settles on the generic plan by itself and no array is encoded.
    var insertShape: (event: NewEvent, condition: (stream: String, version: Int64?)?)? {
        guard events.count == 1, expectations.count <= 2 else { return nil }
        let event = events[0]
        let others = expectations.filter { $0.key != event.stream }
        guard let other = others.first else { return (event, nil) }
        return (event, (other.key, other.value.parameter))
    }

    /// The insert: it writes every event or none, and returns one row per event written.
    var insertStatement: Connection.Statement {
        if let shape = insertShape {
            let event = shape.event
            var parameters: [any PostgresEncodable] = [
                event.stream, ids[0], event.type, JSONB(event.data), JSONB(event.metadata), expectations[event.stream]!.parameter,
            ]
            guard let condition = shape.condition else {
                return Connection.Statement(Self.singleEventUnconditionedSQL, parameters, prepared: true)
            }
            parameters += [condition.stream, condition.version]
            return Connection.Statement(Self.singleEventSQL, parameters, prepared: true)
        }
        return Self.insertStatement(for: [self])
    }

    /// Runs the plan alone: locks and insert in one round trip. Outside a transaction the
    /// pipeline is one implicit transaction; inside the caller's, the locks last until its end.
    /// `guarded` writes follow the insert (`GuardedTable.statements(for:)` of its rows).
    func run(on connection: Connection, guarded: [Connection.Statement] = []) throws -> AppendResult {
        try validate()
        // Generic plans where a statement takes arrays: alone (an implicit transaction) set by
        // the lock statement; inside the caller's transaction, where the setting outlives the
        // append, by a statement of its own.
        let work = [insertStatement] + guarded
        let genericPlans = work.contains(where: \.takesArrays)
        let alone = connection.isIdle
        var statements: [Connection.Statement] = []
        if genericPlans && !alone { statements.append(Connection.Statement(Self.genericPlanSQL, [], prepared: true)) }
        statements.append(Self.lockStatement(lockedStreams, genericPlans: genericPlans && alone))
        let insertIndex = statements.count
        statements += work
        let inserted: QueryResult
        do {
            inserted = try connection.pipeline(statements)[insertIndex]
        } catch let error as PostgresError {
            throw mapped(error)
        }
        guard let result = try result(of: inserted) else {
            // A condition failed: some stream moved or a younger transaction wrote it first.
            throw EventLogError.versionConflict(stream: "", message: "version conflict: a stream moved since it was read")
        }
        return result
    }

    /// The append's result from its insert's rows, or nil when a condition held it back.
    func result(of inserted: QueryResult) throws -> AppendResult? {
        guard inserted.count == events.count else { return nil }
        var positions: [LogPosition] = []
        for row in inserted.rows {
            positions.append(LogPosition(transactionID: try row.uint64(1), position: try row.int64(0)))
        }
        return AppendResult(positions: positions, eventIDs: ids, replayed: false)
    }

    /// The log's errors for the server's: a taken event id is a replay, a taken version a conflict.
    func mapped(_ error: PostgresError) -> any Error {
        if case .server(let server) = error, server.sqlState == SQLState.uniqueViolation {
            if server.constraint == "events_event_id_key" { return EventLogError.alreadyAppended }
            return EventLogError.versionConflict(
                stream: Self.stream(fromKeyDetail: server.detail) ?? writtenStreams[0],
                message: "version conflict: \(server.detail ?? server.message)"
            )
        }
        if case .server(let server) = error, server.sqlState == SQLState.serializationFailure {
            // A guarded write found its row taken since the command read it
            // (`EventLog.guardFailed`): nothing committed; the command runs again on fresh state.
            return EventLogError.versionConflict(stream: writtenStreams[0], message: "guarded write: \(server.message)")
        }
        if case .server(let server) = error, server.sqlState == SQLState.deadlockDetected {
            // Only possible when one transaction appends several times (locks taken per call):
            // as with any conflict, retrying the transaction is the cure.
            return EventLogError.versionConflict(stream: writtenStreams[0], message: "deadlock between appending transactions")
        }
        return error
    }

    /// The first run's result of this command, if its events are in the log, and then only once
    /// they are known to be on the synchronous standby (`EventLog.confirmReplicated`).
    func firstRun(on connection: Connection) throws -> AppendResult? {
        let result = try connection.execute(
            "SELECT event_id, transaction_id, position FROM events WHERE event_id = ANY($1)",
            [ids]
        )
        guard result.count == ids.count else { return nil }
        try EventLog.confirmReplicated(on: connection)
        var byID: [UUID: LogPosition] = [:]
        for row in result.rows { byID[try row.uuid(0)] = LogPosition(transactionID: try row.uint64(1), position: try row.int64(2)) }
        return AppendResult(positions: ids.compactMap { byID[$0] }, eventIDs: ids, replayed: true)
    }

    /// Which stream made the append fail (best effort: the state may have moved again).
    func conflictingStream(on connection: Connection) throws -> String {
        let checked = expectations.keys.sorted().compactMap { stream in expectations[stream]!.parameter.map { (stream, $0) } }
        let result = try connection.execute(
            """
            SELECT c.stream_id FROM unnest($1::text[], $2::bigint[]) AS c(stream_id, version)
            WHERE coalesce((SELECT max(h.stream_version) FROM events h WHERE h.stream_id = c.stream_id), 0) <> c.version
            ORDER BY c.stream_id LIMIT 1
            """,
            [checked.map(\.0), checked.map(\.1)]
        )
        return try result.first?.string(0) ?? writtenStreams[0]
    }

    /// The stream of a unique violation's detail: `Key (stream_id, stream_version)=(s, 3) already exists.`
    static func stream(fromKeyDetail detail: String?) -> String? {
        guard let detail, let open = detail.range(of: ")=("), let comma = detail.range(of: ", ", options: .backwards) else { return nil }
        guard open.upperBound <= comma.lowerBound else { return nil }
        return String(detail[open.upperBound..<comma.lowerBound])
    }
}

extension EventLog {
    /// Waits until everything committed before now is as durable as a commit of ours: one
    /// small write whose commit waits for the synchronous standby, whose WAL comes after
    /// whatever was found. For a command found already in the log on a retry: its first commit
    /// may have been cut while waiting for the standby (committed on the primary alone), and it
    /// may be acknowledged only once this write is. Inside the caller's transaction, its commit
    /// is the one that waits. A cancelled wait throws `commitUnconfirmed`.
    public static func confirmReplicated(on connection: Connection) throws {
        try connection.execute("UPDATE replication_fence SET written_at = clock_timestamp() WHERE id", prepared: true)
    }

    /// Announces committed appends to every reader: this process's at once, other processes'
    /// through a (coalesced) NOTIFY after the commit, never inside the appending transaction.
    public func announceCommitted() {
        signal.notify()
        announcer.announce()
    }
}
