import Foundation
import Logging
import Postgres

/// Reads the feed from a checkpoint to the head in batches, then follows new events live:
/// woken by NOTIFY (through `LogSignal`), with polling as the fallback.
public struct LogFollower: Sendable {
    public var log: EventLog
    public var batchSize: Int
    /// How long to sleep when nothing signals; the fallback for lost notifications.
    public var pollInterval: Duration
    /// How soon to look again when events wait behind a still-running older transaction.
    public var horizonRetry: Duration

    public init(log: EventLog, batchSize: Int = 1000, pollInterval: Duration = .milliseconds(500),
                horizonRetry: Duration = .milliseconds(5)) {
        self.log = log
        self.batchSize = batchSize
        self.pollInterval = pollInterval
        self.horizonRetry = horizonRetry
    }

    /// Calls `handle` with every batch after `checkpoint`, in feed order, until the task is
    /// cancelled or `handle` throws. Each batch is handed over only after the previous one
    /// returned, so `handle` can move a checkpoint safely.
    public func follow(from checkpoint: LogPosition, _ handle: ([RecordedEvent]) async throws -> Void) async throws {
        var checkpoint = checkpoint
        while !Task.isCancelled {
            let generation = log.signal.generation
            let page = try await log.readFeed(after: checkpoint, limit: batchSize)
            if let last = page.events.last {
                try await handle(page.events)
                checkpoint = last.position
            }
            if page.full { continue }
            if page.pendingBeyondHorizon {
                try await Task.sleep(for: horizonRetry)
                continue
            }
            await log.signal.wait(since: generation, timeout: pollInterval)
        }
    }
}
