import Logging
import Postgres
import Synchronization

/// Sends the NOTIFY that tells other processes new events were committed, coalesced.
///
/// NOTIFY is not free: PostgreSQL gives the notifying transaction an id and holds a global lock
/// on the notification queue through its commit. One NOTIFY per append would serialize every
/// writer behind that lock, so appends only mark "dirty" and at most one NOTIFY is in flight
/// per process, at most one every `minimumInterval`; appends that land meanwhile are covered by
/// the next one. The NOTIFY commits asynchronously: losing it in a crash costs only a poll
/// interval. Readers in this process are woken directly, without waiting for it.
public final class AppendAnnouncer: Sendable {
    private struct State {
        var inFlight = false
        var dirty = false
    }
    private let state = Mutex(State())
    private let pool: ConnectionPool
    private let logger: Logger

    private let minimumInterval: Duration

    public init(pool: ConnectionPool, minimumInterval: Duration = .milliseconds(5), logger: Logger = Logger(label: "sniffmeet.log")) {
        self.pool = pool
        self.minimumInterval = minimumInterval
        self.logger = logger
    }

    /// Something was committed; make sure a NOTIFY follows.
    public func announce() {
        let start = state.withLock { state -> Bool in
            if state.inFlight {
                state.dirty = true
                return false
            }
            state.inFlight = true
            return true
        }
        guard start else { return }
        // Detached: it outlives the appending request, whose deadline (`ConnectionPool.deadline`)
        // a child of its task would inherit.
        Task.detached { [self] in
            while true {
                let sent = ContinuousClock.now
                do {
                    try await pool.withConnection { connection in
                        _ = try connection.execute(
                            "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')",
                            [EventLog.channel],
                            prepared: true
                        )
                    }
                } catch {
                    // Readers fall back to polling; nothing is lost but latency.
                    logger.debug("NOTIFY failed", metadata: ["error": "\(error)"])
                }
                let again = state.withLock { state -> Bool in
                    if state.dirty {
                        state.dirty = false
                        return true
                    }
                    state.inFlight = false
                    return false
                }
                if !again { return }
                try? await Task.sleep(until: sent + minimumInterval, clock: .continuous)
            }
        }
    }
}
