import EventLog
import Foundation
import Logging
import Postgres
import Synchronization

/// The query routes' second pool, on streaming replicas (`DATABASE_READ_URL`).
///
/// What goes there: the reads of the read models (`ReadModels`) of `GET` requests, chosen per
/// request by `ReplicaRoutingMiddleware`. What never goes there: writes, session checks (a
/// sign-out must hold at once), anything that LISTENs or takes an advisory lock (PostgreSQL
/// refuses LISTEN on a standby, and advisory locks are per server), and the live inbox streams.
///
/// A replica is used only while it keeps up: `monitor()` looks at the standby every
/// `checkInterval` and leaves it out past `maxLag`. The lag is how long WAL seen received has
/// waited to be replayed: `now() - pg_last_xact_replay_timestamp()` would make the replica of an
/// idle primary look old, and the moment new WAL arrived it would look minutes behind.
/// A replica that fails a read (gone, a recovery conflict) hands that read to the primary and is
/// left out until its next good check.
public final class ReplicaReads: Sendable {
    /// The replicas' pool.
    public let pool: ConnectionPool
    /// Past this lag a replica is left out.
    public let maxLag: Duration
    /// How long a `Min-Log-Position` read waits for the replica before the primary takes it.
    public let wait: Duration
    /// How often the lag is measured.
    public let checkInterval: Duration
    private let usable = Atomic<Bool>(false)
    private let reads = Atomic<Int>(0)
    private let handedToPrimary = Atomic<Int>(0)
    private let logger: Logger

    public init(
        pool: ConnectionPool,
        maxLag: Duration = .seconds(5),
        wait: Duration = .seconds(1),
        checkInterval: Duration = .milliseconds(250),
        logger: Logger = Logger(label: "sniffmeet.replicas")
    ) {
        self.pool = pool
        self.maxLag = maxLag
        self.wait = wait
        self.checkInterval = checkInterval
        self.logger = logger
    }

    /// True while the last lag check passed and no read failed since.
    public var isUsable: Bool { usable.load(ordering: .relaxed) }

    /// Reads answered by the replica, and reads handed to the primary (not caught up, failed).
    public var counts: (replica: Int, primary: Int) { (reads.load(ordering: .relaxed), handedToPrimary.load(ordering: .relaxed)) }

    func countReplicaRead() { reads.add(1, ordering: .relaxed) }
    func countHandedToPrimary() { handedToPrimary.add(1, ordering: .relaxed) }

    /// A read failed on the replica: leave it out until the next good check.
    func readFailed(_ error: any Error) {
        if usable.exchange(false, ordering: .relaxed) {
            logger.warning("replica left out after a failed read", metadata: ["error": "\(PostgresError.logSummary(of: error))"])
        }
    }

    /// The standby's state: in recovery, whether a WAL receiver runs (cut off from its primary it
    /// would fall behind without knowing it), and the WAL positions received and replayed.
    static let lagSQL = """
        SELECT pg_is_in_recovery(), EXISTS (SELECT 1 FROM pg_stat_wal_receiver),
               coalesce(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), '0/0'), 0)::int8,
               coalesce(pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0'), 0)::int8
        """

    /// WAL positions seen received but not yet replayed, with when they were first seen.
    private let pending = Mutex<[(seen: ContinuousClock.Instant, received: Int64)]>([])

    /// The lag from one look at the standby: how long the oldest WAL seen received and still not
    /// replayed has waited (zero when everything received is replayed, however old the last
    /// replayed commit: an idle primary writes nothing). Infinite without a WAL receiver. Zero
    /// when the URL reached a primary.
    func lag(inRecovery: Bool, receiving: Bool, received: Int64, replayed: Int64, at now: ContinuousClock.Instant) -> Duration {
        guard inRecovery else { return .zero }
        return pending.withLock { pending in
            pending.removeAll { $0.received <= replayed }
            if received > replayed, pending.last.map({ $0.received < received }) ?? true { pending.append((now, received)) }
            if !receiving { return .seconds(Int64.max / 2) }
            return pending.first.map { now - $0.seen } ?? .zero
        }
    }

    /// Measures the lag once and sets whether the replica is used.
    public func check() async {
        let good: Bool
        do {
            let state = try await pool.withConnection { connection in
                let row = try connection.execute(Self.lagSQL, prepared: true).first!
                return (try row.bool(0), try row.bool(1), try row.int64(2), try row.int64(3))
            }
            let lag = lag(inRecovery: state.0, receiving: state.1, received: state.2, replayed: state.3, at: .now)
            good = lag <= maxLag
            logger.debug(
                "replica checked",
                metadata: ["lag": "\(lag)", "received": "\(state.2)", "replayed": "\(state.3)", "receiving": "\(state.1)"]
            )
            if !good, isUsable { logger.warning("replica left out: lagging", metadata: ["lag": "\(lag)"]) }
        } catch {
            good = false
            logger.debug("replica check failed", metadata: ["error": "\(error)"])
            if isUsable {
                logger.warning("replica left out: lag check failed", metadata: ["error": "\(PostgresError.logSummary(of: error))"])
            }
        }
        if good, !isUsable { logger.info("replica in use") }
        usable.store(good, ordering: .relaxed)
    }

    /// Checks the lag every `checkInterval` until cancelled.
    public func monitor() async {
        while !Task.isCancelled {
            await check()
            try? await Task.sleep(for: checkInterval)
        }
    }

    /// Whether the replica's own checkpoint rows show every projector in `projectors` at or past
    /// `position` within `wait`. False when it cannot tell (the read then goes to the primary).
    func reached(_ position: LogPosition, projectors: [String], within wait: Duration) async -> Bool {
        let deadline = ContinuousClock.now + wait
        let names = projectors
        let wanted = Set(projectors).count
        while true {
            do {
                let count = try await pool.withConnection { connection in
                    try connection.execute(
                        """
                        SELECT count(*) FROM projector_checkpoints
                        WHERE projector = ANY($1::text[]) AND (transaction_id, position) >= ($2::xid8, $3::bigint)
                        """,
                        [names, position.transactionID, position.position],
                        prepared: true
                    ).first!.int(0)
                }
                if count == wanted { return true }
            } catch {
                readFailed(error)
                return false
            }
            if ContinuousClock.now + .milliseconds(10) > deadline || Task.isCancelled { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// Where one request's reads go: to the replica until something says the primary must answer.
final class ReadChoice: Sendable {
    let replicas: ReplicaReads
    let primary: ConnectionPool
    private let onReplica = Atomic<Bool>(true)

    init(replicas: ReplicaReads, primary: ConnectionPool) {
        self.replicas = replicas
        self.primary = primary
    }

    /// The pool the request's next read uses.
    var pool: ConnectionPool { onReplica.load(ordering: .relaxed) ? replicas.pool : primary }

    var isOnReplica: Bool { onReplica.load(ordering: .relaxed) }

    /// From now on this request reads on the primary.
    func usePrimary() {
        if onReplica.exchange(false, ordering: .relaxed) { replicas.countHandedToPrimary() }
    }

    /// The current request's choice; nil outside the query routes or without replicas.
    @TaskLocal static var current: ReadChoice?
}
