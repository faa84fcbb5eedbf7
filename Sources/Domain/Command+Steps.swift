import Foundation

extension Command {
    /// The streams this command acts on, in order, each with the decider command for it: the one
    /// place that ties an app command to the deciders, and where the rules across streams live.
    ///
    /// `loaded` holds the streams loaded so far: UpdateProfile learns the current nickname from
    /// the user stream, so it names more streams once that is loaded. The order is that of
    /// `SniffMeet.streams(for:loaded:)` and of `Decision.appends`, and also the order in which
    /// the steps decide, so the first refusal in it is the one a client gets.
    func steps(loaded: [StreamName: StreamState]) -> [Step] {
        switch self {
        case .registerUser(let userID, let profile):
            // The nickname is reserved in the same append as the sign-up, so two users cannot both
            // take it: only one append to its stream can win.
            return [
                .step(UserDecider.self, on: .user(userID), .register(userID: userID, profile: profile)),
                .step(NicknameDecider.self, on: .nickname(profile.nickname), .reserve(nickname: profile.nickname, user: userID)),
            ]

        case .updateProfile(let userID, let changes):
            let update = Step.step(UserDecider.self, on: .user(userID), .updateProfile(userID: userID, changes: changes))
            let current = loaded[.user(userID)]?.user?.nickname
            // A new nickname (not just a change of case) moves the reservation.
            if let old = current, let new = changes.nickname, StreamName.nickname(old) != .nickname(new) {
                return [
                    update,
                    .step(NicknameDecider.self, on: .nickname(old), .release(nickname: old, user: userID)),
                    .step(NicknameDecider.self, on: .nickname(new), .reserve(nickname: new, user: userID)),
                ]
            }
            // Otherwise the nickname streams named are only read. The new one is named before the
            // user stream is loaded so that, when the nickname does move, both load in one round.
            var reads: [StreamName] = []
            for nickname in [current, changes.nickname].compactMap({ $0 }) where !reads.contains(.nickname(nickname)) {
                reads.append(.nickname(nickname))
            }
            return [update] + reads.map(Step.read)

        case .dismissNotification(let userID, let notificationID):
            return [.step(UserDecider.self, on: .user(userID), .dismissNotification(userID: userID, notificationID: notificationID))]

        case .requestMate(let requestID, let from, let to, let dropToken):
            return [
                .step(MatesDecider.self, on: .mates(from, to), .request(requestID: requestID, from: from, to: to, dropToken: dropToken))
            ]

        case .acceptMate(let requestID, let pair, let by):
            return [.step(MatesDecider.self, on: .mates(pair), .accept(requestID: requestID, by: by))]

        case .declineMate(let requestID, let pair, let by):
            return [.step(MatesDecider.self, on: .mates(pair), .decline(requestID: requestID, by: by))]

        case .cancelMateRequest(let requestID, let pair, let by):
            return [.step(MatesDecider.self, on: .mates(pair), .cancel(requestID: requestID, by: by))]

        case .unpair(let by, let mate):
            return [.step(MatesDecider.self, on: .mates(by, mate), .unpair(by: by, mate: mate))]

        case .sendWalk(let walkID, let from, let to, let message, let latitude, let longitude, let placeName):
            return [
                .step(
                    WalkDecider.self,
                    on: .walk(walkID),
                    .send(
                        walkID: walkID,
                        from: from,
                        to: to,
                        message: message,
                        latitude: latitude,
                        longitude: longitude,
                        placeName: placeName
                    )
                ),
                // Only to a current mate, checked after the walk's own rules. The pair stream is read,
                // never written; an unpairing that commits meanwhile makes the append fail.
                .check(MatesDecider.self, on: .mates(from, to)) { pair throws(DomainError) in
                    guard pair.areMates else { throw .notMates }
                },
            ]

        case .respondWalk(let walkID, let by, let answer):
            return [.step(WalkDecider.self, on: .walk(walkID), .respond(by: by, answer: answer))]

        case .cancelWalk(let walkID, let by):
            return [.step(WalkDecider.self, on: .walk(walkID), .cancel(by: by))]

        case .expireWalk(let walkID):
            return [.step(WalkDecider.self, on: .walk(walkID), .expire)]

        case .deleteAccount(let userID, let partners, let walks):
            // The user stream first (its refusal wins), then the nickname it holds (known once
            // the user stream is loaded), then every pair and walk, settled on their behalf.
            var steps: [Step] = [.step(UserDecider.self, on: .user(userID), .delete(userID: userID))]
            if let nickname = loaded[.user(userID)]?.user?.nickname {
                steps.append(.step(NicknameDecider.self, on: .nickname(nickname), .release(nickname: nickname, user: userID)))
            }
            steps += Self.settling(userID, partners: partners, walks: walks) { .erase(user: userID, partner: $0) }
            return steps

        case .clearNotifications(let userID):
            return [.step(UserDecider.self, on: .user(userID), .clearNotifications(userID: userID))]

        case .block(let by, let user, let walks):
            // Blocking someone who does not exist writes nothing (and answers like any block).
            let target: [Step] = by == user ? [] : [.read(.user(user))]
            guard by == user || loaded[.user(user)]?.user?.isRegistered == true else { return target }
            return target + [.step(MatesDecider.self, on: .mates(by, user), .block(by: by, user: user))]
                + Self.settling(by, partners: [], walks: walks) { _ in .withdraw(user: by, partner: user) }

        case .unblock(let by, let user):
            return [.step(MatesDecider.self, on: .mates(by, user), .unblock(by: by, user: user))]

        case .report(let reportID, let reporter, let reported, let reason, let walkID, let messageID, let note):
            // Only someone the reporter has met (had a mate request with, either way): anyone
            // else, existing or not, is `not_found`, decided before anything about the user.
            var steps: [Step] = [
                .check(MatesDecider.self, on: .mates(reporter, reported)) { pair throws(DomainError) in
                    guard pair.haveMet else { throw .notFound }
                }
            ]
            if let walkID {
                steps.append(
                    .check(WalkDecider.self, on: .walk(walkID)) { walk throws(DomainError) in
                        guard let request = walk.request, Set([request.from, request.to]) == Set([reporter, reported]) else {
                            throw .notFound
                        }
                    }
                )
            }
            if let messageID {
                // A reported message must be theirs, in our conversation (read, not written); an
                // unsent one still counts (its place and sender stay), though its text is gone.
                steps.append(
                    .check(ChatDecider.self, on: .chat(reporter, reported)) { chat throws(DomainError) in
                        guard chat.messages[messageID]?.from == reported else { throw .notFound }
                    }
                )
            }
            steps.append(
                .step(
                    UserDecider.self,
                    on: .user(reported),
                    .report(
                        reportID: reportID,
                        reporter: reporter,
                        reported: reported,
                        reason: reason,
                        walkID: walkID,
                        messageID: messageID,
                        note: note
                    )
                )
            )
            return steps

        case .resolveReport(let reportID, let reported, let by):
            return [.step(UserDecider.self, on: .user(reported), .resolveReport(reportID: reportID, by: by))]

        case .suspendUser(let userID, let reason, let partners, let walks, let by):
            return [.step(UserDecider.self, on: .user(userID), .suspend(userID: userID, reason: reason, by: by))]
                + Self.settling(userID, partners: partners, walks: walks) { .withdraw(user: userID, partner: $0) }

        case .unsuspendUser(let userID, let by):
            return [.step(UserDecider.self, on: .user(userID), .unsuspend(userID: userID, by: by))]

        case .recordWalkLog(let walkLogID, let owner, let walkID, let figures, let visibility):
            let record = Step.step(
                WalkLogDecider.self,
                on: .walkLog(walkLogID),
                .record(walkLogID: walkLogID, owner: owner, walkID: walkID, figures: figures, visibility: visibility)
            )
            guard let walkID else { return [record] }
            // Only an accepted walk of the owner's, checked after the log's own rules. The walk
            // stream is read, never written.
            return [
                record,
                .check(WalkDecider.self, on: .walk(walkID)) { walk throws(DomainError) in
                    guard walk.status == .accepted, walk.from == owner || walk.to == owner else {
                        throw .validationFailed(field: "walk_id", reason: "must be an accepted walk of yours")
                    }
                },
            ]

        case .changeWalkLogVisibility(let walkLogID, let by, let visibility):
            return [.step(WalkLogDecider.self, on: .walkLog(walkLogID), .changeVisibility(by: by, visibility: visibility))]

        case .deleteWalkLog(let walkLogID, let by):
            return [.step(WalkLogDecider.self, on: .walkLog(walkLogID), .delete(by: by))]

        case .sendMessage(let messageID, let from, let to, let text, let photoID):
            return [
                .step(ChatDecider.self, on: .chat(from, to), .send(messageID: messageID, from: from, to: to, text: text, photoID: photoID)),
                Self.onlyBetweenMates(from, to),
            ]

        case .editMessage(let messageID, let by, let mate, let text):
            // After an unpairing the history is read-only.
            return [
                .step(ChatDecider.self, on: .chat(by, mate), .edit(messageID: messageID, by: by, text: text)),
                Self.onlyBetweenMates(by, mate),
            ]

        case .unsendMessage(let messageID, let by, let mate):
            // Taking one's words back needs no mate: it works after an unpairing or a block too.
            return [.step(ChatDecider.self, on: .chat(by, mate), .unsend(messageID: messageID, by: by))]

        case .reclaimNickname(let userID):
            // The user stream is only read, as a condition: a nickname change or a deletion that
            // commits meanwhile makes the append fail and the reclaim be decided again. Its
            // nickname is known once it is loaded; a deleted or unknown user reclaims nothing.
            guard let user = loaded[.user(userID)]?.user, !user.isDeleted, let nickname = user.nickname else {
                return [.read(.user(userID))]
            }
            return [.read(.user(userID)), .step(NicknameDecider.self, on: .nickname(nickname), .reserve(nickname: nickname, user: userID))]
        }
    }

    /// A step on every pair of `user` with one of `partners` (`pairCommand`) and on every walk
    /// of `walks` (withdrawn if still waiting), each once, in a fixed order.
    private static func settling(
        _ user: UUID,
        partners: [UUID],
        walks: [UUID],
        pairCommand: (UUID) -> MatesDecider.Command
    ) -> [Step] {
        var steps: [Step] = []
        var seen: Set<UUID> = [user]
        for partner in partners.sorted(by: { $0.uuidString < $1.uuidString }) where seen.insert(partner).inserted {
            steps.append(.step(MatesDecider.self, on: .mates(user, partner), pairCommand(partner)))
        }
        for walk in Set(walks).sorted(by: { $0.uuidString < $1.uuidString }) {
            steps.append(.step(WalkDecider.self, on: .walk(walk), .erase(user: user)))
        }
        return steps
    }

    /// Only to a current mate neither of whom blocked the other, checked after the chat's own
    /// rules. The pair stream is read, never written; an unpairing or block that commits
    /// meanwhile makes the append fail, so no message lands after it.
    private static func onlyBetweenMates(_ a: UUID, _ b: UUID) -> Step {
        .check(MatesDecider.self, on: .mates(a, b)) { pair throws(DomainError) in
            guard a != b, pair.areMates, !pair.isBlocked else { throw .notMates }
        }
    }

    /// Whether deciding this command (without a refusal) uses up the drop token it presented.
    /// A RequestMate that got that far had a valid token: it is spent even if nothing changed
    /// (a repeated request), so one token never makes two requests.
    var consumesDropToken: Bool {
        if case .requestMate = self { true } else { false }
    }
}
