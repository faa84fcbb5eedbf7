import EventLog
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// One reader per process for every open live inbox stream (`GET /v1/me/notifications/stream`).
///
/// Streams do not poll. The feed waits until the notifications projector (and for `me` streams
/// the chats projector) commits past what it has read, then reads the new entries of every
/// listening user in one query and hands each stream its own. Idle streams cost nothing but a
/// heartbeat every `heartbeatInterval`, which the feed also sends (no timer per stream), and a
/// stream past its `closeAt` is ended there.
///
/// A stream that resumes (`Last-Event-ID`) behind the feed first gets its own missed entries,
/// read once, before it joins the shared reads.
public final class NotificationFeed: Sendable {
    /// What a stream receives.
    public enum Delivery: Sendable {
        case entries([NotificationJSON])
        case heartbeat
        /// For `GET /v1/me/stream`: inbox entries and chat, in feed order.
        case events([MeStreamEvent])
    }

    /// How many streams may be open at once.
    public struct Limits: Sendable {
        public var perUser: Int
        public var perProcess: Int
        public init(perUser: Int = 5, perProcess: Int = 5000) {
            self.perUser = perUser
            self.perProcess = perProcess
        }
    }

    struct Subscriber {
        var user: UUID
        /// The last position this stream has been given.
        var position: LogPosition
        /// Still to be caught up from `position` to the feed's position.
        var joining: Bool
        var closeAt: ContinuousClock.Instant
        var continuation: AsyncStream<Delivery>.Continuation
        /// A `GET /v1/me/stream` (inbox and chat) rather than an inbox-only stream.
        var me = false
        /// The conversation the app shows (`?viewing=`), on a `me` stream.
        var viewing: UUID?
    }

    struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var perUser: [UUID: Int] = [:]
        var nextID: UInt64 = 0
        var stopped = false
        /// Who is typing to whom, until when (8 s after the last announcement).
        var typing: [TypingPair: ContinuousClock.Instant] = [:]
    }

    struct TypingPair: Hashable {
        var from: UUID
        var to: UUID
    }

    let readModels: ReadModels
    let limits: Limits
    let heartbeatInterval: Duration
    /// Waits until the notifications projector passes a position (the in-process runner), or
    /// nil to look at the database every `idlePoll`.
    let waiter: ProjectionProgress.Waiter?
    let idlePoll: Duration
    let logger: Logger
    /// Entries read per query.
    static let batch = 500
    /// Deliveries a slow stream may have waiting before it is ended (it resumes with Last-Event-ID).
    static let backlog = 64

    let state = Mutex(State())

    init(
        readModels: ReadModels,
        limits: Limits,
        heartbeatInterval: Duration,
        waiter: ProjectionProgress.Waiter?,
        idlePoll: Duration = .milliseconds(250),
        logger: Logger
    ) {
        self.readModels = readModels
        self.limits = limits
        self.heartbeatInterval = heartbeatInterval
        self.waiter = waiter
        self.idlePoll = idlePoll
        self.logger = logger
    }

    /// Open streams now.
    public var openStreams: Int { state.withLock { $0.subscribers.count } }

    /// One open stream: its deliveries, and `end()` to close it from outside (the client left).
    struct Subscription: Sendable {
        let deliveries: AsyncStream<Delivery>
        let continuation: AsyncStream<Delivery>.Continuation
        func end() { continuation.finish() }
    }

    /// Opens a stream for `user` after `position`, ending at `closeAt`;
    /// `429 rate_limited` past the user's or the process's cap.
    func subscribe(
        user: UUID,
        after position: LogPosition,
        closeAt: ContinuousClock.Instant,
        me: Bool = false,
        viewing: UUID? = nil
    ) throws -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(of: Delivery.self, bufferingPolicy: .bufferingOldest(Self.backlog))
        let id = try state.withLock { state throws(APIError) -> UInt64 in
            guard !state.stopped else { throw APIError.unavailable }
            guard state.subscribers.count < limits.perProcess else {
                throw APIError.rateLimited(retryAfter: 5, "This server has too many open streams; try again.")
            }
            guard state.perUser[user, default: 0] < limits.perUser else {
                throw APIError.rateLimited(retryAfter: 5, "At most \(limits.perUser) streams may be open per user.")
            }
            state.nextID &+= 1
            state.subscribers[state.nextID] = Subscriber(
                user: user,
                position: position,
                joining: true,
                closeAt: closeAt,
                continuation: continuation,
                me: me,
                viewing: viewing
            )
            state.perUser[user, default: 0] += 1
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return Subscription(deliveries: stream, continuation: continuation)
    }

    private func remove(_ id: UInt64) {
        state.withLock { state in
            guard let gone = state.subscribers.removeValue(forKey: id) else { return }
            state.perUser[gone.user, default: 1] -= 1
            if state.perUser[gone.user] == 0 { state.perUser[gone.user] = nil }
        }
    }

    /// Serves the streams until cancelled, then ends them all.
    ///
    /// Each kind of stream (inbox only, `me`) keeps the feed position it has been served to,
    /// or nil while none of its kind is open. A round catches up the streams that joined, then
    /// waits until the projectors the open kinds read from pass the lower of those positions,
    /// and only then reads: idle streams cost no query at all.
    func run() async {
        var inboxAt: LogPosition?
        var meAt: LogPosition?
        var lastBeat = ContinuousClock.now
        while !Task.isCancelled {
            do {
                let (inbox, me) = state.withLock { state in
                    (state.subscribers.values.contains { !$0.me }, state.subscribers.values.contains { $0.me })
                }
                // A kind nobody listens to is not followed; its position is learned again on its next join.
                if !inbox { inboxAt = nil }
                if !me { meAt = nil }
                if !inbox && !me {
                    try await Task.sleep(for: idlePoll)
                    continue
                }
                if inbox {
                    let position: LogPosition
                    if let inboxAt {
                        position = inboxAt
                    } else {
                        position = try await readModels.feed(users: [], after: .start, limit: 1).readTo
                    }
                    try await catchUpJoining(to: position)
                    inboxAt = position
                }
                if me { meAt = try await joinMeStreams(at: meAt) }
                var lowest: LogPosition?
                var names: [String] = []
                if let inboxAt {
                    lowest = inboxAt
                    names = ["notifications"]
                }
                if let meAt {
                    lowest = min(lowest ?? meAt, meAt)
                    names = ["notifications", "chats"]
                }
                if let lowest {
                    // Streams still joining are caught up next time, from where they stand.
                    let passed = try await projectorsPassed(lowest, names, within: idlePoll)
                    // A chats projector stopped or behind must not hold up the inbox streams.
                    if let position = inboxAt {
                        var inboxPassed = passed
                        if !passed, meAt != nil { inboxPassed = try await projectorsPassed(position, ["notifications"], within: .zero) }
                        if inboxPassed { inboxAt = try await serveInboxStreams(from: position) }
                    }
                    if passed, let position = meAt { meAt = try await serveMeStreams(from: position) }
                }
                let beat = ContinuousClock.now - lastBeat >= heartbeatInterval
                if beat { lastBeat = .now }
                beatAndClose(beat: beat)
            } catch is CancellationError {
                break
            } catch {
                // Keep the positions: starting again from the current checkpoints would skip what
                // the open streams have not been given yet.
                logger.warning("notification feed failed; retrying", metadata: ["error": "\(ErrorMiddleware.logSummary(error))"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
        stop()
    }

    /// One read of the inbox for every listening inbox stream, repeated while cut short by the
    /// batch size. Returns the position the inbox streams stand at.
    private func serveInboxStreams(from start: LogPosition) async throws -> LogPosition {
        let listeners = state.withLock { state in
            Set(state.subscribers.values.filter { !$0.joining && !$0.me }.map(\.user))
        }
        var position = start
        while !listeners.isEmpty {
            let round = try await readModels.feed(users: Array(listeners), after: position, limit: Self.batch)
            deliver(round.entries)
            position = round.readTo
            if round.entries.count < Self.batch { break }
        }
        return position
    }

    /// Ends every stream and refuses new ones (shutdown).
    func stop() {
        let all = state.withLock { state in
            state.stopped = true
            return state.subscribers.values.map(\.continuation)
        }
        for continuation in all { continuation.finish() }
    }

    /// Whether the projectors `names` are past `position`, waiting up to `timeout` (without a
    /// waiter: after sleeping `timeout`, assumed so).
    private func projectorsPassed(_ position: LogPosition, _ names: [String], within timeout: Duration) async throws -> Bool {
        let next = LogPosition(transactionID: position.transactionID, position: position.position + 1)
        if let waiter { return try await waiter(next, names, timeout) }
        try await Task.sleep(for: timeout)
        return true
    }

    /// Streams that joined since the last round: those resuming from behind `position` get their
    /// own entries up to it; all then stand at `position` at least.
    private func catchUpJoining(to position: LogPosition) async throws {
        let joining = state.withLock { state in
            state.subscribers.filter { $0.value.joining && !$0.value.me }.map { (id: $0.key, user: $0.value.user, from: $0.value.position) }
        }
        for joiner in joining {
            var from = joiner.from
            while from < position {
                let entries = try await readModels.notifications(of: joiner.user, after: from, limit: Self.batch)
                    .filter { $0.position <= position }
                guard !entries.isEmpty else { break }
                if !send(.entries(entries), to: joiner.id) { break }
                from = entries[entries.count - 1].position
                if entries.count < Self.batch { break }
            }
            state.withLock { state in
                guard var subscriber = state.subscribers[joiner.id] else { return }
                subscriber.joining = false
                subscriber.position = max(subscriber.position, position)
                state.subscribers[joiner.id] = subscriber
            }
        }
    }

    /// Hands each stream the entries of its user past its own position.
    private func deliver(_ entries: [(user: UUID, entry: NotificationJSON)]) {
        guard !entries.isEmpty else { return }
        let byUser = Dictionary(grouping: entries, by: \.user)
        let targets = state.withLock { state -> [(UInt64, [NotificationJSON])] in
            var targets: [(UInt64, [NotificationJSON])] = []
            for (id, subscriber) in state.subscribers where !subscriber.joining && !subscriber.me {
                guard let mine = byUser[subscriber.user] else { continue }
                let fresh = mine.map(\.entry).filter { $0.position > subscriber.position }
                guard let last = fresh.last else { continue }
                state.subscribers[id]?.position = last.position
                targets.append((id, fresh))
            }
            return targets
        }
        for (id, fresh) in targets { send(.entries(fresh), to: id) }
    }

    /// Ends streams past their time and, with `beat`, sends the others a heartbeat.
    private func beatAndClose(beat: Bool) {
        let now = ContinuousClock.now
        let (beating, closing) = state.withLock { state in
            (
                beat ? state.subscribers.filter { $0.value.closeAt > now }.map(\.key) : [],
                state.subscribers.values.filter { $0.closeAt <= now }.map(\.continuation)
            )
        }
        for continuation in closing { continuation.finish() }
        for id in beating { send(.heartbeat, to: id) }
    }

    /// Yields to one stream; a stream whose client does not keep up is ended (it resumes with
    /// `Last-Event-ID`, losing nothing). Returns whether the delivery was taken.
    @discardableResult
    func send(_ delivery: Delivery, to id: UInt64) -> Bool {
        guard let continuation = state.withLock({ $0.subscribers[id]?.continuation }) else { return false }
        if case .dropped = continuation.yield(delivery) {
            continuation.finish()
            return false
        }
        return true
    }
}

/// Runs the process's `NotificationFeed` until graceful shutdown, then ends its streams.
struct NotificationFeedService: Service {
    let feed: NotificationFeed

    func run() async throws {
        await cancelWhenGracefulShutdown { await feed.run() }
        feed.stop()
    }
}
