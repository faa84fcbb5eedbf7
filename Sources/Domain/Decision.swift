import Foundation

/// What a command decided: the events to append, per stream, in order.
///
/// Every stream the handler loaded is a condition of the append (it is appended to with the
/// version it was read at, even when it gets no events), so this lists only streams with events.
public struct Decision: Sendable, Equatable {
    /// The events for one stream, in order.
    public struct Append: Sendable, Equatable {
        public var stream: StreamName
        public var events: [Event]

        public init(stream: StreamName, events: [Event]) {
            self.stream = stream
            self.events = events
        }
    }

    /// Streams with their new events, in a fixed order (that of `SniffMeet.streams(for:loaded:)`).
    public let appends: [Append]
    /// All events in append order, each with its stream: the handler walks them five times per
    /// command (evolve, seal, remember, answer), so they are flattened once.
    public let events: [(stream: StreamName, event: Event)]
    /// Whether the presented drop token is now used up (any RequestMate that was not refused,
    /// including a repeat that changed nothing).
    public let consumesDropToken: Bool

    public init(appends: [Append] = [], consumesDropToken: Bool = false) {
        self.appends = appends.filter { !$0.events.isEmpty }
        self.events = self.appends.flatMap { append in append.events.map { (append.stream, $0) } }
        self.consumesDropToken = consumesDropToken
    }

    public static func == (lhs: Decision, rhs: Decision) -> Bool {
        // `events` follows from `appends`.
        lhs.appends == rhs.appends && lhs.consumesDropToken == rhs.consumesDropToken
    }

    /// The events for `stream` (empty if none).
    public func events(for stream: StreamName) -> [Event] {
        appends.first { $0.stream == stream }?.events ?? []
    }

    /// `true` when the command changed nothing (an accepted no-op such as a repeated request).
    public var isEmpty: Bool { appends.isEmpty }
}
