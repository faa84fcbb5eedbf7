import EventLog
import Foundation
import JSONText
import Projections

/// What `GET /v1/me/stream` carries: inbox entries and chat messages (each with its feed
/// position as its SSE id, so `Last-Event-ID` resumes both), read markers and typing (live only).
public enum MeStreamEvent: Sendable {
    case notification(NotificationJSON)
    case message(ChatMessageJSON, position: LogPosition)
    case read(user: UUID, upTo: Int)
    case typing(user: UUID)

    /// The SSE id: the feed position, for the events a client resumes after.
    var position: LogPosition? {
        switch self {
        case .notification(let entry): entry.position
        case .message(_, let position): position
        case .read, .typing: nil
        }
    }
}

/// `{"user_id", "up_to"?}` of the `read` and `typing` events.
struct ChatPresenceJSON: JSONObjectWritable {
    var user: UUID
    var upTo: Int?

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("user_id", user)
        if let upTo { object.int("up_to", upTo) }
    }
}

extension NotificationFeed {
    /// How long a typing announcement shows.
    static let typingShown: Duration = .seconds(8)

    /// Catches up the `me` streams that joined since the last round, from their own positions
    /// to where the `me` streams stand (`position`, or the read models' position when nil, the
    /// first stream of its kind), and hands them the typing they missed. Returns that position.
    func joinMeStreams(at known: LogPosition?) async throws -> LogPosition {
        let position: LogPosition
        if let known {
            position = known
        } else {
            position = try await meRound(users: [], after: .start, upTo: nil).readTo
        }
        let joining = state.withLock { state in
            state.subscribers.filter { $0.value.me && $0.value.joining }.map { (id: $0.key, user: $0.value.user, from: $0.value.position) }
        }
        for joiner in joining {
            var from = joiner.from
            while from < position {
                let round = try await meRound(users: [joiner.user], after: from, upTo: position)
                guard !round.events.isEmpty else { break }
                if !send(.events(round.events.map(\.event)), to: joiner.id) { break }
                from = round.readTo
                if !round.cutShort { break }
            }
            let now = ContinuousClock.now
            let typing = state.withLock { state -> [MeStreamEvent] in
                guard var subscriber = state.subscribers[joiner.id] else { return [] }
                subscriber.joining = false
                subscriber.position = max(subscriber.position, position)
                state.subscribers[joiner.id] = subscriber
                return state.typing.filter { $0.key.to == joiner.user && $0.value > now }.map { .typing(user: $0.key.from) }
            }
            if !typing.isEmpty { send(.events(typing), to: joiner.id) }
        }
        return position
    }

    /// One round of the listening `me` streams: one read of the inbox and one of the chat
    /// changes (in one round trip) serve every listening user. Both read models are read up to
    /// the position both have reached, so one `Last-Event-ID` resumes both without loss or
    /// duplicates. Returns where the `me` streams stand.
    func serveMeStreams(from start: LogPosition) async throws -> LogPosition {
        let listeners = state.withLock { state in Set(state.subscribers.values.filter { $0.me && !$0.joining }.map(\.user)) }
        var position = start
        guard !listeners.isEmpty else { return position }
        while true {
            let round = try await meRound(users: Array(listeners), after: position, upTo: nil)
            deliverMe(round.events)
            position = round.readTo
            if !round.cutShort { break }
        }
        return position
    }

    /// Inbox entries and chat changes of `users` after `position`, merged in feed order, up to
    /// the position both read models (and `upTo`) have reached.
    private func meRound(
        users: [UUID],
        after position: LogPosition,
        upTo: LogPosition?
    ) async throws -> (events: [(user: UUID, event: MeStreamEvent)], readTo: LogPosition, cutShort: Bool) {
        // Both read models in one round trip and one transaction: a round of the me streams costs
        // the database what a round of the inbox streams does (`scripts/bench-streams` counted two
        // transactions per round before).
        let inboxQuery = NotificationsQueries.feed(users: users, after: position, limit: Self.batch)
        let chatQuery = ChatsQueries.feed(users: users, after: position, limit: Self.batch)
        let (inbox, chat) = try await readModels.gate.withConnection(readModels.pool) { connection in
            let results = try connection.pipeline([inboxQuery.statement, chatQuery.statement])
            return (try inboxQuery.read(results[0]), try chatQuery.read(results[1]))
        }
        var limit = min(inbox.readTo, chat.readTo)
        if let upTo { limit = min(limit, upTo) }
        var events: [(user: UUID, event: MeStreamEvent)] = []
        for (user, entry) in inbox.entries where entry.position <= limit { events.append((user, .notification(entry))) }
        for change in chat.changes where change.position <= limit {
            events.append((change.user, .message(ChatMessageJSON(change.message, conversation: change.mate), position: change.position)))
        }
        events.sort { $0.event.position! < $1.event.position! }
        let cutShort = inbox.entries.count == Self.batch || chat.changes.count == Self.batch
        return (events, max(limit, position), cutShort)
    }

    /// Hands each `me` stream the events of its user past its own position.
    private func deliverMe(_ events: [(user: UUID, event: MeStreamEvent)]) {
        guard !events.isEmpty else { return }
        let byUser = Dictionary(grouping: events, by: \.user)
        let targets = state.withLock { state -> [(UInt64, [MeStreamEvent])] in
            var targets: [(UInt64, [MeStreamEvent])] = []
            for (id, subscriber) in state.subscribers where subscriber.me && !subscriber.joining {
                guard let mine = byUser[subscriber.user] else { continue }
                let fresh = mine.map(\.event).filter { $0.position! > subscriber.position }
                guard let last = fresh.last?.position else { continue }
                state.subscribers[id]?.position = last
                targets.append((id, fresh))
            }
            return targets
        }
        for (id, fresh) in targets { send(.events(fresh), to: id) }
    }

    /// A read marker moved or someone is typing (from any process, through NOTIFY): straight to
    /// the `me` streams of the one it concerns. Typing is also held here for 8 s, for streams
    /// that open meanwhile.
    func signal(_ signal: ChatSignal) {
        let now = ContinuousClock.now
        let (target, event): (UUID, MeStreamEvent)
        switch signal {
        case .typing(let from, let to):
            (target, event) = (to, .typing(user: from))
        case .read(let reader, let mate, let upTo):
            (target, event) = (mate, .read(user: reader, upTo: upTo))
        }
        let ids = state.withLock { state -> [UInt64] in
            if case .typing(let from, let to) = signal {
                state.typing = state.typing.filter { $0.value > now }
                state.typing[TypingPair(from: from, to: to)] = now + Self.typingShown
            }
            return state.subscribers.filter { $0.value.me && $0.value.user == target }.map(\.key)
        }
        for id in ids { send(.events([event]), to: id) }
    }

    /// Whether a `me` stream of `user` open in this process shows the conversation with `mate`.
    public func isViewing(_ user: UUID, conversationWith mate: UUID) -> Bool {
        state.withLock { state in state.subscribers.values.contains { $0.me && $0.user == user && $0.viewing == mate } }
    }
}
