import Foundation

/// The entry point of the domain for the command handler: which streams a command needs,
/// how to fold them, and the decision across all of them.
///
/// Where each rule of the app lives:
/// - Dog profile fields: `DogProfile.validated()` and `FreeText`; sign-up, profile changes and device token:
///   `UserDecider`.
/// - Nicknames unique ignoring case: `NicknameDecider` on `nickname-<key>` streams,
///   written in the same append as the user stream (here, `.registerUser` / `.updateProfile`).
/// - Drop tokens, mate requests, answers, unpairing: `MatesDecider` on `mates-<lo>-<hi>`.
/// - Walk requests, answers, cancelling, expiry: `WalkDecider` on `walk-<uuid>`;
///   "only to a current mate" is checked here, against the pair stream (`.sendWalk`).
/// - Every refusal is a `DomainError` with the API's stable code.
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

    /// Streams the command needs loaded, given what has been loaded so far. UpdateProfile first
    /// needs the user stream to learn the current nickname, whose stream it then also needs.
    /// The handler loads, calls again, until the list stops growing. The order is fixed and is
    /// the order of `Decision.appends`.
    public static func streams(for command: Command, loaded: [StreamName: StreamState]) -> [StreamName] {
        switch command {
        case .registerUser(let userID, let profile):
            return [.user(userID), .nickname(profile.nickname)]
        case .updateProfile(let userID, let changes):
            var names: [StreamName] = [.user(userID)]
            if let current = loaded[.user(userID)]?.user?.nickname {
                names.append(.nickname(current))
            }
            if let new = changes.nickname, !names.contains(.nickname(new)) {
                names.append(.nickname(new))
            }
            return names
        case .setDeviceToken(let userID, _), .dismissNotification(let userID, _):
            return [.user(userID)]
        case .requestMate(_, let from, let to, _):
            return [.mates(from, to)]
        case .acceptMate(_, let pair, _), .declineMate(_, let pair, _), .cancelMateRequest(_, let pair, _):
            return [.mates(pair)]
        case .unpair(let by, let mate):
            return [.mates(by, mate)]
        case .sendWalk(let walkID, let from, let to, _, _, _, _):
            // The pair stream is read only, as the condition "still mates" of the append.
            return [.walk(walkID), .mates(from, to)]
        case .respondWalk(let walkID, _, _), .cancelWalk(let walkID, _), .expireWalk(let walkID):
            return [.walk(walkID)]
        }
    }

    /// The state of a stream with no events.
    public static func initialState(of stream: StreamName) -> StreamState {
        switch stream.kind {
        case .user: .user(UserDecider.initial)
        case .nickname: .nickname(NicknameDecider.initial)
        case .mates: .mates(MatesDecider.initial)
        case .walk: .walk(WalkDecider.initial)
        }
    }

    /// Applies one event to a stream's state; events of other stream kinds leave it unchanged.
    public static func evolve(_ state: StreamState, _ event: Event) -> StreamState {
        switch state {
        case .user(let s): .user(UserDecider.evolve(s, event))
        case .nickname(let s): .nickname(NicknameDecider.evolve(s, event))
        case .mates(let s): .mates(MatesDecider.evolve(s, event))
        case .walk(let s): .walk(WalkDecider.evolve(s, event))
        }
    }

    /// The state of `stream` after `events` (a convenience for the handler, tests and replay tool).
    public static func fold(_ stream: StreamName, _ events: [Event]) -> StreamState {
        events.reduce(initialState(of: stream), evolve)
    }

    /// Decides `command` against the loaded streams. A stream missing from `states` counts as
    /// empty, so the handler must pass every stream `streams(for:loaded:)` named.
    public static func decide(
        _ command: Command, states: [StreamName: StreamState], context: DecisionContext
    ) throws(DomainError) -> Decision {
        // The log keeps milliseconds; deciding at that precision makes the events in memory
        // equal to the ones read back.
        let now = Timestamp.roundedToMilliseconds(context.now)
        func user(_ s: StreamName) -> UserState { states[s]?.user ?? .initial }
        func nickname(_ s: StreamName) -> NicknameState { states[s]?.nickname ?? .initial }
        func mates(_ s: StreamName) -> MatesState { states[s]?.mates ?? .initial }
        func walk(_ s: StreamName) -> WalkState { states[s]?.walk ?? .initial }

        switch command {
        case .registerUser(let userID, let profile):
            let userStream = StreamName.user(userID), nicknameStream = StreamName.nickname(profile.nickname)
            let registered = try UserDecider.decide(.register(userID: userID, profile: profile), user(userStream), now: now)
            let reserved = try NicknameDecider.decide(
                .reserve(nickname: profile.nickname, user: userID), nickname(nicknameStream), now: now)
            return Decision(appends: [.init(stream: userStream, events: registered), .init(stream: nicknameStream, events: reserved)])

        case .updateProfile(let userID, let changes):
            let userStream = StreamName.user(userID)
            let current = user(userStream)
            let updated = try UserDecider.decide(.updateProfile(userID: userID, changes: changes), current, now: now)
            var appends: [Decision.Append] = [.init(stream: userStream, events: updated)]
            // A new nickname (not just a change of case) moves the reservation.
            if let old = current.nickname, let new = changes.nickname, StreamName.nickname(old) != StreamName.nickname(new) {
                let oldStream = StreamName.nickname(old), newStream = StreamName.nickname(new)
                let released = try NicknameDecider.decide(.release(nickname: old, user: userID), nickname(oldStream), now: now)
                let reserved = try NicknameDecider.decide(.reserve(nickname: new, user: userID), nickname(newStream), now: now)
                appends += [.init(stream: oldStream, events: released), .init(stream: newStream, events: reserved)]
            }
            return Decision(appends: appends)

        case .setDeviceToken(let userID, let token):
            let stream = StreamName.user(userID)
            let events = try UserDecider.decide(.setDeviceToken(userID: userID, token: token), user(stream), now: now)
            return Decision(appends: [.init(stream: stream, events: events)])

        case .dismissNotification(let userID, let notificationID):
            let stream = StreamName.user(userID)
            let events = try UserDecider.decide(.dismissNotification(userID: userID, notificationID: notificationID), user(stream), now: now)
            return Decision(appends: [.init(stream: stream, events: events)])

        case .requestMate(let requestID, let from, let to, let dropToken):
            let stream = StreamName.mates(from, to)
            let events = try MatesDecider.decide(
                .request(requestID: requestID, from: from, to: to, dropToken: dropToken), mates(stream), now: now)
            // Reaching here means the token was valid: it is spent even if nothing changed.
            return Decision(appends: [.init(stream: stream, events: events)], consumesDropToken: true)

        case .acceptMate(let requestID, let pair, let by):
            let stream = StreamName.mates(pair)
            let events = try MatesDecider.decide(.accept(requestID: requestID, by: by), mates(stream), now: now)
            return Decision(appends: [.init(stream: stream, events: events)])

        case .declineMate(let requestID, let pair, let by):
            let stream = StreamName.mates(pair)
            let events = try MatesDecider.decide(.decline(requestID: requestID, by: by), mates(stream), now: now)
            return Decision(appends: [.init(stream: stream, events: events)])

        case .cancelMateRequest(let requestID, let pair, let by):
            let stream = StreamName.mates(pair)
            let events = try MatesDecider.decide(.cancel(requestID: requestID, by: by), mates(stream), now: now)
            return Decision(appends: [.init(stream: stream, events: events)])

        case .unpair(let by, let mate):
            let stream = StreamName.mates(by, mate)
            let events = try MatesDecider.decide(.unpair(by: by, mate: mate), mates(stream), now: now)
            return Decision(appends: [.init(stream: stream, events: events)])

        case .sendWalk(let walkID, let from, let to, let message, let latitude, let longitude, let placeName):
            let stream = StreamName.walk(walkID)
            let events = try WalkDecider.decide(
                .send(walkID: walkID, from: from, to: to, message: message, latitude: latitude, longitude: longitude, placeName: placeName),
                walk(stream), now: now, walkTTL: context.walkTTL)
            // Only to a current mate. The pair stream is a condition of the append, so an unpairing
            // that commits meanwhile makes this append fail and the command be decided again.
            guard mates(.mates(from, to)).areMates else { throw .notMates }
            return Decision(appends: [.init(stream: stream, events: events)])

        case .respondWalk(let walkID, let by, let answer):
            let stream = StreamName.walk(walkID)
            let events = try WalkDecider.decide(.respond(by: by, answer: answer), walk(stream), now: now, walkTTL: context.walkTTL)
            return Decision(appends: [.init(stream: stream, events: events)])

        case .cancelWalk(let walkID, let by):
            let stream = StreamName.walk(walkID)
            let events = try WalkDecider.decide(.cancel(by: by), walk(stream), now: now, walkTTL: context.walkTTL)
            return Decision(appends: [.init(stream: stream, events: events)])

        case .expireWalk(let walkID):
            let stream = StreamName.walk(walkID)
            let events = try WalkDecider.decide(.expire, walk(stream), now: now, walkTTL: context.walkTTL)
            return Decision(appends: [.init(stream: stream, events: events)])
        }
    }
}
