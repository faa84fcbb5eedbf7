import Foundation
import Logging
import NIOCore
import PersonalData
import Postgres
import Prometheus
import ServiceLifecycle

/// The delivery service every `serve` process runs: claims due outbox rows, sends them to APNs
/// concurrently over one HTTP/2 connection, and records each outcome as Apple documents it:
/// 200 delivered; a dead device token (410, `BadDeviceToken`) dropped from its session, so later
/// entries are not sent to it; `ExpiredProviderToken` renews the JWT and sends again at once;
/// 429, 5xx and transport errors retried with exponential backoff and jitter until the push's
/// horizon (or its walk's deadline) has passed. Without APNs settings it only purges old rows.
public final class PushDelivery: Service, Sendable {
    let client: APNsClient?
    let settings: APNsSettings?
    let pool: ConnectionPool
    let seal: DeviceTokenSeal
    let metrics: PrometheusCollectorRegistry
    let logger: Logger
    /// How long an idle loop sleeps before looking again.
    let idle: Duration
    /// Moved once per push: looked up once.
    private let sentCounter: Counter
    private let latencyHistogram: DurationHistogram

    private static let latencyBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(30), .seconds(300),
    ]

    public init(
        settings: APNsSettings?,
        pool: ConnectionPool,
        seal: DeviceTokenSeal,
        metrics: PrometheusCollectorRegistry,
        logger: Logger,
        idle: Duration = .milliseconds(50)
    ) throws {
        self.settings = settings
        self.client = try settings.map(APNsClient.init)
        self.pool = pool
        self.seal = seal
        self.metrics = metrics
        self.logger = logger
        self.idle = idle
        sentCounter = metrics.makeCounter(name: "sniffmeet_push_sent_total")
        latencyHistogram = metrics.makeDurationHistogram(name: "sniffmeet_push_commit_to_apns_seconds", buckets: Self.latencyBuckets)
    }

    public func run() async throws {
        defer { if let client { Task { try? await client.shutdown() } } }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                // Loops that each claim their own batch (SKIP LOCKED): one claims and sends while
                // another's batch is still waiting for its last answers.
                for loop in 0..<(self.client == nil ? 1 : Self.loops) {
                    group.addTask { await self.loop(purging: loop == 0) }
                }
            }
        }
    }

    /// Delivery loops per process.
    static let loops = 4

    private func loop(purging: Bool) async {
        var lastPurge = ContinuousClock.now - .seconds(3600)
        while !Task.isCancelled {
            do {
                if purging, ContinuousClock.now - lastPurge > .seconds(600) {
                    try await pool.withConnection { try PushOutbox.purge(on: $0) }
                    lastPurge = .now
                }
                // A claimed batch is sent and recorded whole even when shutdown cancels the loop
                // (its sends end by the lease's deadline); cut short, its unrecorded rows would
                // wait out their lease before any process could send them.
                let sent = client == nil ? 0 : try await Task { try await self.deliverOnce() }.value
                if sent == 0 { try await Task.sleep(for: client == nil ? .seconds(60) : idle) }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("push delivery failed; retrying", metadata: ["error": "\(type(of: error))"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Claims one batch of due rows, sends them, records the outcomes; returns how many it claimed.
    public func deliverOnce() async throws -> Int {
        guard let client, let settings else { return 0 }
        let seal = self.seal
        // Answers must come well inside the lease: past it another loop or process may claim
        // (and send) the same rows.
        let deadline = NIODeadline.now() + .milliseconds(Int64(settings.lease * 700))
        let claimed = try await pool.withConnection { connection in
            try PushOutbox.claim(limit: settings.concurrency, lease: settings.lease, seal: seal, on: connection)
        }
        guard !claimed.isEmpty else { return 0 }
        var results: [PushOutbox.Result] = []
        var pushes: [(OutgoingPush, Data)] = []
        for row in claimed {
            switch row {
            case .send(let push, let mac): pushes.append((push, mac))
            case .nothing(let pushID, let reason): results.append(.init(pushID: pushID, state: "dropped", error: reason))
            }
        }
        // Outcomes are recorded as they come, a chunk at a time: what a crash can send twice is
        // only what APNs answered since the last record, not the whole batch.
        var pending = results
        var dead: [(session: UUID, mac: Data)] = []
        var batch = pushes
        // A renewed provider token goes out at once, once: the pushes it was refused for are
        // sent again as a batch of their own.
        for attempt in 0..<2 where !batch.isEmpty {
            let answers = AnswerCollector(count: batch.count, every: Self.recordEvery)
            client.send(batch.map(\.0), deadline: deadline, answered: answers.add)
            var again: [(OutgoingPush, Data)] = []
            while let chunk = await answers.next() {
                for answer in chunk {
                    let (push, mac) = batch[answer.index]
                    if answer.outcome == .expiredProviderToken, attempt == 0 {
                        again.append((push, mac))
                        continue
                    }
                    pending.append(result(of: answer.outcome, for: push, settings: settings))
                    if case .deadDevice = answer.outcome { dead.append((push.sessionID, mac)) }
                }
                if pending.count >= Self.recordEvery {
                    try await record(pending, dead: dead)
                    pending = []
                    dead = []
                }
            }
            batch = again
        }
        try await record(pending, dead: dead)
        return claimed.count
    }

    /// Outcomes recorded per statement. Each record is a round trip and a transaction: at 16,
    /// `bench push` spent a fifth more of PostgreSQL's CPU per push than at 64. A crash can send
    /// again at most this many answered pushes per loop beside its unanswered ones.
    static let recordEvery = 64

    private func record(_ results: [PushOutbox.Result], dead: [(session: UUID, mac: Data)]) async throws {
        guard !results.isEmpty else { return }
        try await pool.withConnection { try PushOutbox.record(results, deadDevices: dead, on: $0) }
    }

    /// What becomes of the row of `push` after `outcome` (and the metrics it moves).
    func result(of outcome: APNsOutcome, for push: OutgoingPush, settings: APNsSettings) -> PushOutbox.Result {
        let now = Date()
        switch outcome {
        case .delivered:
            sentCounter.increment()
            latencyHistogram.recordNanoseconds(Int64(max(0, now.timeIntervalSince(push.entryAt)) * 1_000_000_000))
            return .init(pushID: push.pushID, state: "delivered")
        case .deadDevice(let reason), .refused(let reason):
            failed(reason)
            return .init(pushID: push.pushID, state: "failed", error: reason)
        case .expiredProviderToken:
            return retry(push, reason: "ExpiredProviderToken", now: now, settings: settings)
        case .retry(let reason):
            return retry(push, reason: reason, now: now, settings: settings)
        }
    }

    /// The next attempt: 1 s, 2 s, 4 s … (at most 5 minutes) times a jitter of 0.5–1.5, unless
    /// that is past the push's horizon (or its walk's deadline): then it is given up.
    func retry(_ push: OutgoingPush, reason: String, now: Date, settings: APNsSettings) -> PushOutbox.Result {
        metrics.makeCounter(name: "sniffmeet_push_retries_total", labels: [("reason", reason)]).increment()
        let base = min(300, pow(2, Double(max(0, push.attempts - 1))))
        let next = now.addingTimeInterval(base * Double.random(in: 0.5...1.5))
        let deadline = push.expiresAt ?? push.entryAt.addingTimeInterval(settings.horizon)
        guard next < deadline else {
            failed("expired")
            return .init(pushID: push.pushID, state: "failed", error: "expired after \(reason)")
        }
        return .init(pushID: push.pushID, state: "retrying", nextAttempt: next, error: reason)
    }

    private func failed(_ reason: String) {
        metrics.makeCounter(name: "sniffmeet_push_failed_total", labels: [("reason", reason)]).increment()
    }

    /// The outbox by state (`GET /v1/admin/push`); also refreshes the retry-queue gauge.
    public func summary() async throws -> PushSummary {
        let summary = try await pool.withConnection { try PushOutbox.summary(on: $0) }
        metrics.makeGauge(name: "sniffmeet_push_retry_queue").set(Double(summary.counts["retrying"] ?? 0))
        return summary
    }
}
