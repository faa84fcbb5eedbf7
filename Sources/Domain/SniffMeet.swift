import Foundation

/// The entry point of the domain for the command handler: which streams a command needs,
/// how to fold them, and the decision across all of them.
///
/// Where each rule of the app lives:
/// - Dog profile fields: `DogProfile.validated()` and `FreeText`; sign-up, profile changes and device token:
///   `UserDecider`.
/// - Nicknames unique ignoring case: `NicknameDecider` on `nickname-<key>` streams,
///   written in the same append as the user stream (`Command.steps(loaded:)`, `.registerUser` /
///   `.updateProfile`: release the old and reserve the new only when the nickname's key changes;
///   `.reclaimNickname`: the one-time upgrade of nicknames reserved only in legacy streams).
/// - Drop tokens, mate requests, answers, unpairing: `MatesDecider` on `mates-<lo>-<hi>`; that a
///   RequestMate spends its token even when it changes nothing: `Command.consumesDropToken`.
/// - Walk requests, answers, cancelling, expiry: `WalkDecider` on `walk-<uuid>`;
///   "only to a current mate" is checked against the pair stream, read but not written
///   (`Command.steps(loaded:)`, `.sendWalk`).
/// - Deleting an account: `Command.steps(loaded:)`, `.deleteAccount`: `UserDecider` ends the user
///   stream, `NicknameDecider` frees the nickname, `MatesDecider.erase` and `WalkDecider.erase`
///   settle every pair and walk, all in one append. Which fields of an event are personal, and
///   whose (sealed at the log's edge, erased with the account's key): `PersonalData.swift`.
/// - Blocks: `MatesDecider` `.block`/`.unblock` on the pair stream (so a block and a concurrent
///   request or walk cannot both win; a blocked pair's requests are refused like a bad token);
///   `Command.steps(loaded:)`, `.block`, also cancels the walks between them. Reports (only about
///   someone met), their resolution and suspensions: `UserDecider` on the reported user's stream;
///   a suspension withdraws pending requests and walks in the same append.
/// - Walk logs (recording, visibility, deleting): `WalkLogDecider` on `walklog-<uuid>`; that a
///   log's `walk_id` is an accepted walk of its owner is checked against the walk stream, read but
///   not written (`Command.steps(loaded:)`, `.recordWalkLog`).
/// - Chat: `ChatDecider` on `chat-<lo>-<hi>` (send, edit within 15 minutes, unsend); sending
///   and editing only between current mates, checked on the pair stream read but not written
///   (`Command.steps(loaded:)`, `.sendMessage`), as for walks.
/// - Every refusal is a `DomainError` with the API's stable code.
///
/// Each stream kind has a `Decider` (`initial`, `evolve`, `decide`); `Command.steps(loaded:)` says
/// for every app command which streams it acts on and the decider command for each, and `decide`
/// here runs those steps the same way for every command.
///
/// The handler's loop: `streams(for:loaded:)` until the list stops growing, load each stream by
/// folding its events with `initialState(of:)` and `evolve`, call `decide`, append
/// `Decision.appends` with every loaded stream's version as the condition, and on a version
/// conflict reload and decide again.
public enum SniffMeet {
    /// Drop tokens live 5 minutes and are single-use.
    public static let dropTokenLifetime: TimeInterval = PresentedDropToken.dropTokenLifetime
    /// Walk requests are answerable for 60 s unless configured otherwise.
    public static let defaultWalkTTL: TimeInterval = WalkDecider.defaultTTL

    /// Streams the command needs loaded, given what has been loaded so far: those of
    /// `Command.steps(loaded:)`. UpdateProfile first needs the user stream to learn the current
    /// nickname, whose stream it then also needs. The handler loads, calls again, until the list
    /// stops growing. The order is fixed and is the order of `Decision.appends`.
    public static func streams(for command: Command, loaded: [StreamName: StreamState]) -> [StreamName] {
        command.steps(loaded: loaded).map(\.stream)
    }

    /// The state of a stream with no events.
    public static func initialState(of stream: StreamName) -> StreamState {
        switch stream.kind {
        case .user: .user(UserDecider.initial)
        case .nickname: .nickname(NicknameDecider.initial)
        case .mates: .mates(MatesDecider.initial)
        case .walk: .walk(WalkDecider.initial)
        case .walkLog: .walkLog(WalkLogDecider.initial)
        case .chat: .chat(ChatDecider.initial)
        }
    }

    /// Applies one event to a stream's state; events of other stream kinds leave it unchanged.
    public static func evolve(_ state: StreamState, _ event: Event) -> StreamState {
        switch state {
        case .user(let s): .user(UserDecider.evolve(s, event))
        case .nickname(let s): .nickname(NicknameDecider.evolve(s, event))
        case .mates(let s): .mates(MatesDecider.evolve(s, event))
        case .walk(let s): .walk(WalkDecider.evolve(s, event))
        case .walkLog(let s): .walkLog(WalkLogDecider.evolve(s, event))
        case .chat(let s): .chat(ChatDecider.evolve(s, event))
        }
    }

    /// The state of `stream` after `events` (a convenience for the handler, tests and replay tool).
    public static func fold(_ stream: StreamName, _ events: [Event]) -> StreamState {
        events.reduce(initialState(of: stream), evolve)
    }

    /// Decides `command` against the loaded streams: each of its steps in order, the first
    /// refusal winning. A stream missing from `states` counts as empty, so the handler must pass
    /// every stream `streams(for:loaded:)` named.
    public static func decide(
        _ command: Command,
        states: [StreamName: StreamState],
        context: DecisionContext
    ) throws(DomainError) -> Decision {
        // The log keeps milliseconds; deciding at that precision makes the events in memory
        // equal to the ones read back.
        var context = context
        context.now = Timestamp.roundedToMilliseconds(context.now)
        var appends: [Decision.Append] = []
        for step in command.steps(loaded: states) {
            appends.append(Decision.Append(stream: step.stream, events: try step.decide(states[step.stream], context)))
        }
        return Decision(appends: appends, consumesDropToken: command.consumesDropToken)
    }
}
