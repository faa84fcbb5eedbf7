import Foundation

/// One stream a command acts on and what it decides there, whatever the stream's kind: the unit
/// `SniffMeet.decide` runs, in order, for every command (see `Command.steps(loaded:)`).
///
/// Every step's stream is loaded by the handler and is a condition of the append (appended to
/// with the version it was read at); it is written only if the step decides events.
struct Step {
    /// The stream this step reads, and writes if it decides events.
    let stream: StreamName
    /// The events for `stream` given its loaded state (`nil`, not loaded, counts as empty).
    let decide: (StreamState?, DecisionContext) throws(DomainError) -> [Event]

    /// Decides `command` with `decider` on `stream`.
    static func step<D: Decider>(_ decider: D.Type, on stream: StreamName, _ command: D.Command) -> Step {
        Step(stream: stream) { state, context throws(DomainError) -> [Event] in
            try D.decide(command, state.flatMap(D.State.extract) ?? D.initial, context: context)
        }
    }

    /// Reads `stream` without writing it: `rule` refuses the command unless the stream's state
    /// allows it. As a condition of the append, a change to the stream that commits meanwhile
    /// makes the append fail and the command be decided again, so the rule cannot be raced.
    static func check<D: Decider>(
        _ decider: D.Type,
        on stream: StreamName,
        _ rule: @escaping (D.State) throws(DomainError) -> Void
    ) -> Step {
        Step(stream: stream) { state, _ throws(DomainError) -> [Event] in
            try rule(state.flatMap(D.State.extract) ?? D.initial)
            return []
        }
    }

    /// Loads `stream` as a condition of the append, deciding nothing on it.
    static func read(_ stream: StreamName) -> Step {
        Step(stream: stream) { _, _ in [] }
    }
}
