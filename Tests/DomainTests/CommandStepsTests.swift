import Foundation
import XCTest

@testable import Domain

/// The generic path (`Command.steps(loaded:)` run by `SniffMeet.decide`) against the deciders
/// called directly, one hand-written case per command, as `SniffMeet` did before: same streams,
/// same events in the same order, same refusals, for every command in many states and at many times.
final class CommandStepsTests: XCTestCase {
    func testEveryCommandDecidesAsTheDecidersCalledDirectly() throws {
        var decidedEvents = Set<String>()
        var refused = Set<String>()
        for (label, world) in try worlds() {
            for now in nows {
                for walkTTL in [60.0, 90] {
                    let context = DecisionContext(now: now, walkTTL: walkTTL)
                    for command in commands {
                        let states = world.states(for: command)
                        let generic = Result { () throws(DomainError) in try SniffMeet.decide(command, states: states, context: context) }
                        let direct = Result { () throws(DomainError) in try directDecision(command, states: states, context: context) }
                        XCTAssertEqual(generic, direct, "\(label), \(now), \(command)")
                        switch generic {
                        case .success(let decision): if !decision.isEmpty { decidedEvents.insert(command.name) }
                        case .failure: refused.insert(command.name)
                        }
                        // A stream missing from the states counts as empty, on both paths.
                        XCTAssertEqual(
                            Result { () throws(DomainError) in try SniffMeet.decide(command, states: [:], context: context) },
                            Result { () throws(DomainError) in try directDecision(command, states: [:], context: context) },
                            "no states, \(command)"
                        )
                    }
                }
            }
        }
        // The comparison means something only if every command both wrote and was refused somewhere
        // (the expiry job's command is never refused: too early or too late is a no-op).
        XCTAssertEqual(decidedEvents.count, 13, "every command case decided events: \(decidedEvents.sorted())")
        XCTAssertEqual(refused.count, 12, "every command case but ExpireWalk was refused: \(refused.sorted())")
        XCTAssertFalse(refused.contains("ExpireWalk"))
    }

    func testEveryCommandNamesTheStreamsItDidBefore() throws {
        for (label, world) in try worlds() {
            for command in commands {
                XCTAssertEqual(SniffMeet.streams(for: command, loaded: [:]), directStreams(command, loaded: [:]), "\(command)")
                let loaded = world.states(for: command)
                let streams = SniffMeet.streams(for: command, loaded: loaded)
                XCTAssertEqual(streams, directStreams(command, loaded: loaded), "\(label), \(command)")
                XCTAssertEqual(Set(streams).count, streams.count, "each stream once: \(command)")
            }
        }
    }

    func testOnlyRequestMateConsumesTheDropToken() {
        for command in commands {
            XCTAssertEqual(command.consumesDropToken, command.name == "RequestMate", command.name)
        }
    }

    // MARK: - Fixtures

    let nows = [t0, t0.addingTimeInterval(5), t0.addingTimeInterval(59.9996), t0.addingTimeInterval(60), t0.addingTimeInterval(400)]

    /// Alice and Bob at every stage of a friendship and a walk, plus a nobody-yet world.
    func worlds() throws -> [(String, World)] {
        var unpaired = try World.mated()
        try unpaired.run(.unpair(by: bob, mate: alice))
        var accepted = try World.walkPending()
        try accepted.run(.respondWalk(walkID: walk1, by: bob, answer: .accept))
        var cancelled = try World.walkPending()
        try cancelled.run(.cancelWalk(walkID: walk1, by: alice))
        var expired = try World.walkPending()
        expired.now = t0.addingTimeInterval(60)
        try expired.run(.expireWalk(walkID: walk1))
        var renamed = try World.registered()
        try renamed.run(.updateProfile(userID: alice, changes: ProfileChanges(nickname: "Max")))
        var declined = try World.pending()
        try declined.run(.declineMate(requestID: request1, pair: MatePair(alice, bob), by: bob))
        return [
            ("empty", World()), ("registered", try .registered()), ("pending", try .pending()), ("declined", declined),
            ("mated", try .mated()), ("unpaired", unpaired), ("walk pending", try .walkPending()),
            ("walk accepted", accepted), ("walk cancelled", cancelled), ("walk expired", expired), ("renamed", renamed),
        ]
    }

    /// Every command case, accepted and refused in the worlds above.
    let commands: [Command] = {
        let pair = MatePair(alice, bob)
        var list: [Command] = [
            .registerUser(userID: carol, profile: profile(nickname: "Carol")),
            .registerUser(userID: carol, profile: profile(nickname: "aLiCe")),
            .registerUser(userID: carol, profile: profile(nickname: "x")),
            .registerUser(userID: alice, profile: profile(nickname: "Alice")),
            .updateProfile(userID: alice, changes: ProfileChanges(nickname: "Max")),
            .updateProfile(userID: alice, changes: ProfileChanges(nickname: "ALICE")),
            .updateProfile(userID: alice, changes: ProfileChanges(nickname: "Bob")),
            .updateProfile(userID: alice, changes: ProfileChanges(dogName: "Rex")),
            .updateProfile(userID: alice, changes: ProfileChanges(dogName: "")),
            .updateProfile(userID: alice, changes: ProfileChanges()),
            .updateProfile(userID: carol, changes: ProfileChanges(nickname: "Max")),
            .dismissNotification(userID: alice, notificationID: request1),
            .dismissNotification(userID: carol, notificationID: request1),
        ]
        for requestID in [request1, request2] {
            list += [
                .requestMate(requestID: requestID, from: alice, to: bob, dropToken: token(by: bob)),
                .requestMate(requestID: requestID, from: bob, to: alice, dropToken: token(by: alice)),
                .requestMate(
                    requestID: requestID,
                    from: alice,
                    to: bob,
                    dropToken: token(by: bob, issuedAt: t0.addingTimeInterval(-299.9998))
                ),
                .requestMate(requestID: requestID, from: alice, to: bob, dropToken: token(by: carol)),
                .requestMate(requestID: requestID, from: alice, to: bob, dropToken: nil),
                .requestMate(requestID: requestID, from: alice, to: alice, dropToken: token(by: alice)),
                .acceptMate(requestID: requestID, pair: pair, by: bob),
                .acceptMate(requestID: requestID, pair: pair, by: alice),
                .declineMate(requestID: requestID, pair: pair, by: bob),
                .declineMate(requestID: requestID, pair: pair, by: carol),
                .cancelMateRequest(requestID: requestID, pair: pair, by: alice),
                .cancelMateRequest(requestID: requestID, pair: pair, by: bob),
            ]
        }
        list += [.unpair(by: alice, mate: bob), .unpair(by: bob, mate: alice), .unpair(by: alice, mate: alice)]
        for walkID in [walk1, walk2] {
            list += [
                .sendWalk(
                    walkID: walkID,
                    from: alice,
                    to: bob,
                    message: "Park?",
                    latitude: 52.52,
                    longitude: 13.405,
                    placeName: "Tiergarten"
                ),
                .sendWalk(walkID: walkID, from: bob, to: alice, message: "Now?", latitude: -90, longitude: 180, placeName: nil),
                .sendWalk(walkID: walkID, from: alice, to: carol, message: "Park?", latitude: 0, longitude: 0, placeName: nil),
                .sendWalk(walkID: walkID, from: alice, to: alice, message: "Park?", latitude: 0, longitude: 0, placeName: nil),
                .sendWalk(walkID: walkID, from: alice, to: bob, message: "", latitude: 0, longitude: 0, placeName: nil),
                .sendWalk(walkID: walkID, from: alice, to: bob, message: "Park?", latitude: 91, longitude: 0, placeName: nil),
                .respondWalk(walkID: walkID, by: bob, answer: .accept),
                .respondWalk(walkID: walkID, by: bob, answer: .decline),
                .respondWalk(walkID: walkID, by: alice, answer: .accept),
                .cancelWalk(walkID: walkID, by: alice),
                .cancelWalk(walkID: walkID, by: bob),
                .expireWalk(walkID: walkID),
            ]
        }
        list += [
            .deleteAccount(userID: alice, partners: [bob], walks: [walk1, walk2]),
            .deleteAccount(userID: bob, partners: [alice, alice, bob], walks: [walk2]),
            .deleteAccount(userID: carol, partners: [], walks: []),
        ]
        return list
    }()

    // MARK: - The deciders called directly (SniffMeet.decide and streams(for:loaded:) as they were)

    func directStreams(_ command: Command, loaded: [StreamName: StreamState]) -> [StreamName] {
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
        case .dismissNotification(let userID, _):
            return [.user(userID)]
        case .requestMate(_, let from, let to, _):
            return [.mates(from, to)]
        case .acceptMate(_, let pair, _), .declineMate(_, let pair, _), .cancelMateRequest(_, let pair, _):
            return [.mates(pair)]
        case .unpair(let by, let mate):
            return [.mates(by, mate)]
        case .sendWalk(let walkID, let from, let to, _, _, _, _):
            return [.walk(walkID), .mates(from, to)]
        case .respondWalk(let walkID, _, _), .cancelWalk(let walkID, _), .expireWalk(let walkID):
            return [.walk(walkID)]
        case .deleteAccount(let userID, let partners, let walks):
            var names: [StreamName] = [.user(userID)]
            if let nickname = loaded[.user(userID)]?.user?.nickname { names.append(.nickname(nickname)) }
            for partner in Set(partners).subtracting([userID]).sorted(by: { $0.uuidString < $1.uuidString }) {
                names.append(.mates(userID, partner))
            }
            return names + Set(walks).sorted(by: { $0.uuidString < $1.uuidString }).map(StreamName.walk)
        case .clearNotifications, .block, .unblock, .report, .resolveReport, .suspendUser, .unsuspendUser, .recordWalkLog,
            .changeWalkLogVisibility, .deleteWalkLog, .sendMessage, .editMessage, .unsendMessage, .reclaimNickname:
            preconditionFailure("born on the generic path, with nothing to compare it to: SafetyRulesTests names their rules")
        }
    }

    func directDecision(
        _ command: Command,
        states: [StreamName: StreamState],
        context: DecisionContext
    ) throws(DomainError) -> Decision {
        let context = DecisionContext(now: Timestamp.roundedToMilliseconds(context.now), walkTTL: context.walkTTL)
        func user(_ s: StreamName) -> UserState { states[s]?.user ?? .initial }
        func nickname(_ s: StreamName) -> NicknameState { states[s]?.nickname ?? .initial }
        func mates(_ s: StreamName) -> MatesState { states[s]?.mates ?? .initial }
        func walk(_ s: StreamName) -> WalkState { states[s]?.walk ?? .initial }
        func one(_ stream: StreamName, _ events: [Event]) -> Decision { Decision(appends: [.init(stream: stream, events: events)]) }

        switch command {
        case .registerUser(let userID, let profile):
            let userStream = StreamName.user(userID)
            let nicknameStream = StreamName.nickname(profile.nickname)
            let registered = try UserDecider.decide(.register(userID: userID, profile: profile), user(userStream), context: context)
            let reserved = try NicknameDecider.decide(
                .reserve(nickname: profile.nickname, user: userID),
                nickname(nicknameStream),
                context: context
            )
            return Decision(appends: [.init(stream: userStream, events: registered), .init(stream: nicknameStream, events: reserved)])
        case .updateProfile(let userID, let changes):
            let userStream = StreamName.user(userID)
            let current = user(userStream)
            let updated = try UserDecider.decide(.updateProfile(userID: userID, changes: changes), current, context: context)
            var appends: [Decision.Append] = [.init(stream: userStream, events: updated)]
            if let old = current.nickname, let new = changes.nickname, StreamName.nickname(old) != StreamName.nickname(new) {
                let oldStream = StreamName.nickname(old)
                let newStream = StreamName.nickname(new)
                let released = try NicknameDecider.decide(.release(nickname: old, user: userID), nickname(oldStream), context: context)
                let reserved = try NicknameDecider.decide(.reserve(nickname: new, user: userID), nickname(newStream), context: context)
                appends += [.init(stream: oldStream, events: released), .init(stream: newStream, events: reserved)]
            }
            return Decision(appends: appends)
        case .dismissNotification(let userID, let notificationID):
            return one(
                .user(userID),
                try UserDecider.decide(
                    .dismissNotification(userID: userID, notificationID: notificationID),
                    user(.user(userID)),
                    context: context
                )
            )
        case .requestMate(let requestID, let from, let to, let dropToken):
            let stream = StreamName.mates(from, to)
            let events = try MatesDecider.decide(
                .request(requestID: requestID, from: from, to: to, dropToken: dropToken),
                mates(stream),
                context: context
            )
            return Decision(appends: [.init(stream: stream, events: events)], consumesDropToken: true)
        case .acceptMate(let requestID, let pair, let by):
            return one(.mates(pair), try MatesDecider.decide(.accept(requestID: requestID, by: by), mates(.mates(pair)), context: context))
        case .declineMate(let requestID, let pair, let by):
            return one(.mates(pair), try MatesDecider.decide(.decline(requestID: requestID, by: by), mates(.mates(pair)), context: context))
        case .cancelMateRequest(let requestID, let pair, let by):
            return one(.mates(pair), try MatesDecider.decide(.cancel(requestID: requestID, by: by), mates(.mates(pair)), context: context))
        case .unpair(let by, let mate):
            return one(.mates(by, mate), try MatesDecider.decide(.unpair(by: by, mate: mate), mates(.mates(by, mate)), context: context))
        case .sendWalk(let walkID, let from, let to, let message, let latitude, let longitude, let placeName):
            let events = try WalkDecider.decide(
                .send(walkID: walkID, from: from, to: to, message: message, latitude: latitude, longitude: longitude, placeName: placeName),
                walk(.walk(walkID)),
                context: context
            )
            guard mates(.mates(from, to)).areMates else { throw .notMates }
            return one(.walk(walkID), events)
        case .respondWalk(let walkID, let by, let answer):
            return one(.walk(walkID), try WalkDecider.decide(.respond(by: by, answer: answer), walk(.walk(walkID)), context: context))
        case .cancelWalk(let walkID, let by):
            return one(.walk(walkID), try WalkDecider.decide(.cancel(by: by), walk(.walk(walkID)), context: context))
        case .expireWalk(let walkID):
            return one(.walk(walkID), try WalkDecider.decide(.expire, walk(.walk(walkID)), context: context))
        case .deleteAccount(let userID, let partners, let walks):
            let userStream = StreamName.user(userID)
            var appends: [Decision.Append] = [
                .init(stream: userStream, events: try UserDecider.decide(.delete(userID: userID), user(userStream), context: context))
            ]
            if let held = user(userStream).nickname {
                let stream = StreamName.nickname(held)
                appends.append(
                    .init(
                        stream: stream,
                        events: try NicknameDecider.decide(.release(nickname: held, user: userID), nickname(stream), context: context)
                    )
                )
            }
            for partner in Set(partners).subtracting([userID]).sorted(by: { $0.uuidString < $1.uuidString }) {
                let stream = StreamName.mates(userID, partner)
                appends.append(
                    .init(
                        stream: stream,
                        events: try MatesDecider.decide(.erase(user: userID, partner: partner), mates(stream), context: context)
                    )
                )
            }
            for walkID in Set(walks).sorted(by: { $0.uuidString < $1.uuidString }) {
                appends.append(
                    .init(
                        stream: .walk(walkID),
                        events: try WalkDecider.decide(.erase(user: userID), walk(.walk(walkID)), context: context)
                    )
                )
            }
            return Decision(appends: appends)
        case .clearNotifications, .block, .unblock, .report, .resolveReport, .suspendUser, .unsuspendUser, .recordWalkLog,
            .changeWalkLogVisibility, .deleteWalkLog, .sendMessage, .editMessage, .unsendMessage, .reclaimNickname:
            preconditionFailure("born on the generic path, with nothing to compare it to: SafetyRulesTests names their rules")
        }
    }
}
