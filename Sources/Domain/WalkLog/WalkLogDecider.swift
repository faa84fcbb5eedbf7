import Foundation

/// The decider of a `walklog-<uuid>` stream: recording a walk, changing who sees it, deleting
/// it. That a walk log's `walk_id` is an accepted walk of its owner is checked by
/// `Command.steps(loaded:)`, which reads the walk stream and makes it a condition of the append.
public enum WalkLogDecider: Decider {
    public enum Command: Sendable, Equatable {
        case record(walkLogID: UUID, owner: UUID, walkID: UUID?, figures: WalkLogFigures, visibility: WalkLogVisibility)
        case changeVisibility(by: UUID, visibility: WalkLogVisibility)
        case delete(by: UUID)
    }

    /// A walk lasts at most 12 hours (API.md, "Walk log").
    public static let maximumSeconds = 12 * 3_600
    public static let maximumPoints = 20_000

    public static let initial = WalkLogState.initial

    public static func evolve(_ state: WalkLogState, _ event: Event) -> WalkLogState {
        var s = state
        switch event {
        case .walkLogged(let e):
            s.logged = e
            s.visibility = e.visibility
        case .walkLogVisibilityChanged(let e):
            s.visibility = e.visibility
        case .walkLogDeleted:
            s.deleted = true
        default:
            break
        }
        return s
    }

    public static func decide(_ command: Command, _ state: WalkLogState, context: DecisionContext) throws(DomainError) -> [Event] {
        let now = context.now
        switch command {
        case .record(let walkLogID, let owner, let walkID, let figures, let visibility):
            try check(figures)
            // Walk log ids are made by the server; the stream must be new.
            guard !state.exists else { throw .alreadyExists }
            return [
                .walkLogged(
                    WalkLogged(walkLogID: walkLogID, owner: owner, walkID: walkID, figures: figures, visibility: visibility, createdAt: now)
                )
            ]

        case .changeVisibility(let by, let visibility):
            // Someone else's log, or a deleted one, is not found: no hint that it exists.
            guard let logged = state.logged, !state.deleted, logged.owner == by else { throw .notFound }
            guard state.visibility != visibility else { return [] }
            return [
                .walkLogVisibilityChanged(WalkLogVisibilityChanged(walkLogID: logged.walkLogID, owner: by, visibility: visibility, at: now))
            ]

        case .delete(let by):
            guard let logged = state.logged, !state.deleted, logged.owner == by else { throw .notFound }
            return [.walkLogDeleted(WalkLogDeleted(walkLogID: logged.walkLogID, owner: by, at: now))]
        }
    }

    /// The figures the server measured: only a server bug could break these, yet the log must
    /// never hold an impossible walk (nor NaN, which JSON cannot carry).
    static func check(_ f: WalkLogFigures) throws(DomainError) {
        guard f.endedAt >= f.startedAt, f.elapsedSeconds >= 0, f.elapsedSeconds <= maximumSeconds else {
            throw .validationFailed(field: "points", reason: "a walk lasts at most 12 hours, in time order")
        }
        guard f.movingSeconds >= 0, f.movingSeconds <= f.elapsedSeconds else {
            throw .validationFailed(field: "points", reason: "moving time exceeds elapsed time")
        }
        guard f.distanceM.isFinite, f.distanceM >= 0 else {
            throw .validationFailed(field: "points", reason: "distance must be a finite, non-negative number")
        }
        guard (2...maximumPoints).contains(f.pointCount) else {
            throw .validationFailed(field: "points", reason: "a walk has 2 to \(maximumPoints) points")
        }
        guard f.routeDigest.utf8.count == 64, f.routeDigest.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw .validationFailed(field: "route", reason: "the route's digest must be a lowercase hex SHA-256")
        }
    }
}
