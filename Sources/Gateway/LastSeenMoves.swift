import Foundation
import Logging
import Postgres
import Synchronization

/// Sessions whose `last_seen_at` is due to move, written together in the background: one
/// statement per `interval` for all of them instead of one write per request in the request's
/// own path (it was the costliest statement of a mate request's accept under
/// `scripts/bench-http`, whose every accept came from a session unseen for a minute).
///
/// The API shows `last_seen_at` to the minute, and only as a hint: a move may land up to
/// `interval` late, and a crash or a stop loses the moves not yet written; their commits do not
/// wait for the WAL flush. A session deleted meanwhile is simply not found.
final class LastSeenMoves: Sendable {
    private struct State {
        var due: Set<UUID> = []
        var writing = false
    }

    private let state = Mutex(State())
    private let pool: ConnectionPool
    private let interval: Duration
    private let logger = Logger(label: "sniffmeet.sessions")

    init(pool: ConnectionPool, interval: Duration = .seconds(1)) {
        self.pool = pool
        self.interval = interval
    }

    /// `session` was seen now; its row moves within `interval`.
    func seen(_ session: UUID) {
        let starts = state.withLock { state -> Bool in
            state.due.insert(session)
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        // Detached: a task of its own would inherit the request's deadline (`ConnectionPool.deadline`).
        if starts { Task.detached { await self.writeWhileDue() } }
    }

    private func writeWhileDue() async {
        while true {
            try? await Task.sleep(for: interval)
            let due = state.withLock { state -> [UUID] in
                defer { state.due.removeAll() }
                if state.due.isEmpty { state.writing = false }
                return Array(state.due)
            }
            if due.isEmpty { return }
            do {
                try await pool.withConnection { connection in
                    // One statement, its own transaction, committed without waiting for the flush.
                    _ = try connection.execute(
                        """
                        WITH moved AS (UPDATE sessions SET last_seen_at = now() WHERE session_id = ANY($1::uuid[]))
                        SELECT set_config('synchronous_commit', 'off', true)
                        """,
                        [due],
                        prepared: true
                    )
                }
            } catch {
                // Only a hint is lost; the next request after a minute moves it again.
                logger.warning("last-seen moves not written", metadata: ["sessions": "\(due.count)", "error": "\(error)"])
            }
        }
    }
}
