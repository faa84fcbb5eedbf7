import Commands
import Domain
import EventLog
import Foundation
import HTTPTypes
import Hummingbird
import Postgres

/// Runs the command behind a route: `Idempotency-Key` handling, the command id, metrics, error
/// codes, and the `Log-Position` of the answer.
struct CommandRunner: Sendable {
    let services: GatewayServices
    let handler: CommandHandler

    /// What a route's work produced.
    struct Result: Sendable {
        var status: HTTPResponse.Status
        /// JSON body, or nil for 204.
        var body: Data?
        /// The log position to report; nil for work that writes outside the log (drop tokens).
        var logPosition: LogPosition?
    }

    /// Runs `work` once per (caller, Idempotency-Key): a repeat with the same request gets the
    /// stored answer, one with a different request `422 idempotency_key_reused`.
    ///
    /// With `handsOutToken`, a successful answer carries a bearer token that only this request
    /// may ever see: it is not stored, and a repeat gets `409 already_registered` instead.
    func run(_ request: Request, scope: UUID, body: Data, handsOutToken: Bool = false,
             _ work: @escaping @Sendable (CommandMetadata) async throws -> Result) async throws -> Response {
        let actor: UUID? = scope == IdempotencyStore.anonymous ? nil : scope
        guard let key = request.headers[.idempotencyKey] else {
            return Self.response(try await work(.firstUse(actor: actor)))
        }
        guard IdempotencyStore.isValidKey(key) else {
            throw APIError.validation("Idempotency-Key", "Idempotency-Key must be 1 to 200 visible ASCII characters")
        }
        let fingerprint = IdempotencyStore.requestHash(method: request.method.rawValue, path: request.uri.path, body: body)
        if let stored = try await services.idempotency.lookup(scope: scope, key: key) {
            guard stored.requestHash == fingerprint else { throw APIError.idempotencyKeyReused }
            return Self.replay(stored.answer)
        }
        let metadata = CommandMetadata(commandID: IdempotencyStore.commandID(scope: scope, key: key), actor: actor)
        let answer: IdempotencyStore.Answer
        var ownAnswer: Response?
        do {
            let result = try await work(metadata)
            if handsOutToken {
                ownAnswer = Self.response(result)
                answer = try Self.stored(APIError.alreadyRegistered)
            } else {
                answer = .init(status: result.status.code, logPosition: result.logPosition?.description,
                               body: result.body.map { String(decoding: $0, as: UTF8.self) } ?? "")
            }
        } catch {
            // A refusal is the answer to this request too; failures worth retrying are not stored.
            guard let refusal = Self.refusal(error) else { throw error }
            answer = try Self.stored(refusal)
        }
        let first = try await services.idempotency.store(scope: scope, key: key, requestHash: fingerprint, answer: answer)
        guard first.requestHash == fingerprint else { throw APIError.idempotencyKeyReused }
        return ownAnswer ?? Self.replay(first.answer)
    }

    /// A refusal as a stored answer.
    static func stored(_ refusal: APIError) throws -> IdempotencyStore.Answer {
        let body = try ResponseEncoder().encode(APIError.Body(error: .init(code: refusal.code, message: refusal.message, field: refusal.field)))
        return .init(status: refusal.status.code, logPosition: nil, body: String(decoding: body, as: UTF8.self))
    }

    /// Handles a domain command and counts what it appended.
    func handle(_ command: Command, _ metadata: CommandMetadata,
                inSameTransaction: (@Sendable (Postgres.Connection) throws -> Void)? = nil) async throws -> CommandOutcome {
        let outcome = try await services.gate.admitted {
            try await handler.handle(command, metadata: metadata, inSameTransaction: inSameTransaction)
        }
        record(command.name, outcome)
        return outcome
    }

    func record(_ name: String, _ outcome: CommandOutcome) {
        if !outcome.replayed && !outcome.events.isEmpty { services.metrics.recordAppends(command: name, events: outcome.events.count) }
    }

    /// The position to report: the command's last event, or for a command that changed nothing
    /// the log's head (the state it answered from is at or before it).
    func position(of outcome: CommandOutcome) async throws -> LogPosition {
        if let position = outcome.position { return position }
        return try await services.gate.admitted { try await services.log.head() }
    }

    /// The user streams' current profiles, folded from the log (a command's answer must not
    /// depend on how far the read models are).
    func cards(_ users: [UUID], known: [StreamName: StreamState] = [:]) async throws -> [UUID: CardJSON] {
        let missing = users.filter { known[.user($0)] == nil }
        var states = known
        if !missing.isEmpty {
            let loaded = try await services.gate.admitted { try await handler.states(of: missing.map(StreamName.user)) }
            states.merge(loaded) { old, _ in old }
        }
        var cards: [UUID: CardJSON] = [:]
        for user in users {
            guard let profile = states[.user(user)]?.user?.profile else { throw APIError.notFound }
            cards[user] = CardJSON(userID: user, profile: profile)
        }
        return cards
    }

    // MARK: Answers

    static func refusal(_ error: any Error) -> APIError? {
        switch error {
        case let error as APIError where error.status.code < 500 && error.status != .unauthorized: return error
        case let error as DomainError: return error.apiError
        case CommandError.domain(let error): return error.apiError
        default: return nil
        }
    }

    static func response(_ result: Result) -> Response {
        guard let body = result.body else { return GatewayServices.noContent(logPosition: result.logPosition?.description) }
        return GatewayServices.jsonData(body, status: result.status, logPosition: result.logPosition?.description)
    }

    static func replay(_ answer: IdempotencyStore.Answer) -> Response {
        let status = HTTPResponse.Status(code: answer.status)
        if answer.body.isEmpty { return GatewayServices.noContent(logPosition: answer.logPosition) }
        return GatewayServices.jsonData(answer.body.utf8, status: status, logPosition: answer.logPosition)
    }
}

extension CommandError {
    /// The HTTP answer of a command that failed.
    var apiError: APIError {
        switch self {
        case .domain(let error): error.apiError
        case .tooManyConflicts: APIError(.serviceUnavailable, "conflict", "Too many concurrent changes; try again.",
                                         headers: ["Retry-After": "1"])
        }
    }
}
