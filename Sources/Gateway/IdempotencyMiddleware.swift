import Commands
import Foundation
import HTTPTypes
import Hummingbird

/// Runs a command route once per (caller, `Idempotency-Key`), where an anonymous caller is its
/// address and request (`IdempotencyStore.anonymousScope`): a repeat with the same request
/// gets the stored answer without reaching the route, one with a different request
/// `422 idempotency_key_reused`. Otherwise the route runs with its `CommandMetadata` in the
/// context (`context.command`): the id derived from (caller, key), so that even a retry racing
/// the first attempt writes nothing twice, or without a key a fresh one.
///
/// What is stored: the route's answer, or its `CommandRefusal`. Failures worth retrying (5xx)
/// and errors in reading the request are not.
///
/// With `handsOutToken` (sign-up), a successful answer carries a bearer token that only this
/// request may ever see: it is not stored, and a repeat gets `409 already_registered` instead.
struct IdempotencyMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let store: IdempotencyStore
    let body: BodyReader
    var handsOutToken = false
    /// Whose address an anonymous request comes from (`Request.clientAddress`).
    var trustForwardedFor = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        var context = context
        // Read once, here: the fingerprint covers it and the route decodes the same buffer.
        // DELETE routes take no body, so none is read or fingerprinted.
        let raw = request.method == .delete ? Data() : try await body.bytes(&request)
        let actor = context.identity?.user
        guard let key = request.headers[.idempotencyKey] else {
            context.commandMetadata = .firstUse(actor: actor)
            var response = try await next(request, context)
            response.headers[.eraseAnswerWith] = nil
            return response
        }
        guard IdempotencyStore.isValidKey(key) else {
            throw APIError.validation("Idempotency-Key", "Idempotency-Key must be 1 to 200 visible ASCII characters")
        }
        let fingerprint = IdempotencyStore.requestHash(method: request.method.rawValue, path: request.uri.path, body: raw)
        let scope: UUID
        if let actor {
            scope = actor
        } else if context.isOperator {
            scope = IdempotencyStore.operators
        } else {
            let client = request.clientAddress(context, trustForwardedFor: trustForwardedFor)
            scope = store.anonymousScope(client: client, requestHash: fingerprint)
        }
        if let stored = try await store.lookup(scope: scope, key: key) {
            guard stored.requestHash == fingerprint else { throw APIError.idempotencyKeyReused }
            return stored.answer.response
        }
        context.commandMetadata = CommandMetadata(commandID: IdempotencyStore.commandID(scope: scope, key: key), actor: actor)
        let answer: IdempotencyStore.Answer
        var response: Response?
        var erasedWith: UUID?
        do {
            var fresh = try await next(request, context)
            erasedWith = fresh.headers[.eraseAnswerWith].flatMap { UUID(uuidString: $0) }
            fresh.headers[.eraseAnswerWith] = nil
            if handsOutToken {
                answer = try .refusal(.alreadyRegistered)
            } else {
                let bytes = try await fresh.body.collected()
                fresh.body = .init(byteBuffer: bytes)
                answer = .init(status: fresh.status.code, logPosition: fresh.headers[.logPosition], body: String(buffer: bytes))
            }
            response = fresh
        } catch let refusal as CommandRefusal {
            answer = try .refusal(refusal.error)
        }
        let first = try await store.store(scope: scope, key: key, requestHash: fingerprint, answer: answer, erasedWith: erasedWith)
        guard first.requestHash == fingerprint else { throw APIError.idempotencyKeyReused }
        // A concurrent request with the same key may have stored first: everyone gets that answer.
        if handsOutToken || first.answer == answer, let response { return response }
        return first.answer.response
    }
}

extension IdempotencyStore.Answer {
    /// A refusal as stored: its status and JSON error body (no `Log-Position`).
    static func refusal(_ error: APIError) throws -> Self {
        let body = try ResponseEncoder().encode(APIError.Body(error: .init(code: error.code, message: error.message, field: error.field)))
        return .init(status: error.status.code, logPosition: nil, body: String(decoding: body, as: UTF8.self))
    }

    /// The stored answer as sent the first time.
    var response: Response {
        if body.isEmpty { return .noContent(logPosition: logPosition) }
        return .json(body.utf8, status: HTTPResponse.Status(code: status), logPosition: logPosition)
    }
}
