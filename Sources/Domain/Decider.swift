import Foundation

/// The rules of one stream kind, after Emmett's decider: the state of a stream with no events,
/// how one event changes it, and the events a command on that stream decides.
///
/// `SniffMeet` runs every decider the same way (`Command.steps(loaded:)` names the streams and
/// the decider command for each); a decider knows nothing of other streams.
public protocol Decider {
    /// What the stream knows after its events; one case of `StreamState`.
    associatedtype State: StreamKindState
    /// What can be asked of one stream of this kind.
    associatedtype Command: Sendable, Equatable

    /// The state of a stream with no events.
    static var initial: State { get }
    /// Applies one event; events of other stream kinds leave the state unchanged.
    static func evolve(_ state: State, _ event: Event) -> State
    /// The events `command` adds to a stream in `state`, or why it is refused. `context.now` is
    /// taken as given (`SniffMeet.decide` rounds it to the log's milliseconds first).
    static func decide(_ command: Command, _ state: State, context: DecisionContext) throws(DomainError) -> [Event]
}

extension Decider {
    /// `decide` at `now`, every other fact of the context at its default (for tests and tools).
    public static func decide(_ command: Command, _ state: State, now: Date) throws(DomainError) -> [Event] {
        try decide(command, state, context: DecisionContext(now: now))
    }

    /// The state after `events`, from `initial`.
    public static func fold(_ events: [Event]) -> State {
        events.reduce(initial, evolve)
    }
}
