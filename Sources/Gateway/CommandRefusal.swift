/// A command said no (a domain refusal, or the thing it acts on is not there): that is the
/// answer to this request, so `IdempotencyMiddleware` stores it under the `Idempotency-Key`
/// like a success, and a retry gets it again rather than a new decision.
///
/// Errors found while reading the request (its body, its path), before any command ran, are
/// plain `APIError`s and are not stored: a retry with a corrected request may use its key.
struct CommandRefusal: Error {
    var error: APIError

    init(_ error: APIError) { self.error = error }
}
