import Commands
import Domain
import EventLog
import Foundation
import PersonalData
import Postgres

/// Runs a domain command through the command handler for a route: admitted by the database
/// gate, its appends counted in the metrics, its refusals typed as `CommandRefusal` (the
/// request's answer, stored under its `Idempotency-Key`); and what the answer shows of it
/// (`position(of:)`, `cards(_:known:)`).
struct CommandRunner: Sendable {
    let handler: CommandHandler
    let gate: DatabaseGate
    let log: EventLog
    let metrics: GatewayMetrics

    /// Handles `command` and counts what it appended.
    func run(
        _ command: Command,
        _ metadata: CommandMetadata,
        inSameTransaction: (@Sendable (Postgres.Connection) throws -> Void)? = nil
    ) async throws -> CommandOutcome {
        let handler = self.handler
        return try await run(command.name) {
            try await handler.handle(command, metadata: metadata, inSameTransaction: inSameTransaction)
        }
    }

    /// Handles `command` with `sideWrites` in its append (`CommandHandler.handle(_:metadata:sideWrites:)`).
    func run(
        _ command: Command,
        _ metadata: CommandMetadata,
        sideWrites: @escaping @Sendable (_ firstEventID: UUID) -> [GuardedRow]
    ) async throws -> CommandOutcome {
        let handler = self.handler
        return try await run(command.name) {
            try await handler.handle(command, metadata: metadata, sideWrites: sideWrites)
        }
    }

    /// RequestMate, which spends the addressee's drop token with its append.
    func requestMate(from user: UUID, to: UUID, dropToken: String, _ metadata: CommandMetadata) async throws -> CommandOutcome {
        let handler = self.handler
        return try await run("RequestMate") {
            try await handler.requestMate(from: user, to: to, dropToken: dropToken, metadata: metadata)
        }
    }

    private func run(_ name: String, _ handle: () async throws -> CommandOutcome) async throws -> CommandOutcome {
        let outcome: CommandOutcome
        do {
            outcome = try await gate.admitted(handle)
        } catch let error as DomainError {
            throw CommandRefusal(error.apiError)
        } catch CommandError.domain(let error) {
            throw CommandRefusal(error.apiError)
        } catch PersonalDataError.erased {
            // The caller's account was deleted while this request was on its way.
            throw CommandRefusal(.unauthorized)
        }
        if !outcome.replayed && !outcome.events.isEmpty { metrics.recordAppends(command: name, events: outcome.events.count) }
        if outcome.conflicts > 0 { metrics.recordConflicts(command: name, count: outcome.conflicts) }
        if outcome.waitedTurn { metrics.recordTurnWait(command: name) }
        return outcome
    }

    /// The position to report: the command's last event, or for a command that changed nothing
    /// the log's head (the state it answered from is at or before it).
    func position(of outcome: CommandOutcome) async throws -> LogPosition {
        if let position = outcome.position { return position }
        let log = self.log
        return try await gate.admitted { try await log.head() }
    }

    /// The user streams' current profiles, folded from the log (a command's answer must not
    /// depend on how far the read models are). Pass the command's `outcome.states` as `known`:
    /// they hold the streams its answer shows, so nothing is loaded twice.
    func cards(_ users: [UUID], known: [StreamName: StreamState]) async throws -> [UUID: CardJSON] {
        // Each user's stream name made once (a name is an allocation and a hash).
        let streams = users.map(StreamName.user)
        let missing = streams.filter { known[$0] == nil }
        var states = known
        if !missing.isEmpty {
            let handler = self.handler
            let loaded = try await gate.admitted { try await handler.states(of: missing) }
            states.merge(loaded) { old, _ in old }
        }
        var cards: [UUID: CardJSON] = [:]
        for (user, stream) in zip(users, streams) {
            guard let profile = states[stream]?.user?.profile else { throw CommandRefusal(.notFound) }
            cards[user] = CardJSON(userID: user, profile: profile)
        }
        return cards
    }
}

extension CommandError {
    /// The HTTP answer of a command that failed.
    var apiError: APIError {
        switch self {
        case .domain(let error): error.apiError
        case .tooManyConflicts:
            // The API's answer for a database too busy to take the write now (never a code of its own).
            APIError(
                .serviceUnavailable,
                "unavailable",
                "Too many concurrent changes; try again.",
                headers: ["Retry-After": "1"]
            )
        }
    }
}
