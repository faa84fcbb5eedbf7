import HTTPTypes

/// The API's own header names, made once: `HTTPField.Name(_:)` validates and lowercases its
/// text, which is wasted work when repeated on every request.
extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    /// Internal, never sent: a route's answer shows this message, so the stored idempotent
    /// answer goes when the message is unsent (`IdempotencyMiddleware` removes it).
    static let eraseAnswerWith = HTTPField.Name("SniffMeet-Erase-Answer-With")!
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    static let logPosition = HTTPField.Name("Log-Position")!
    static let minLogPosition = HTTPField.Name("Min-Log-Position")!
    static let xAccelBuffering = HTTPField.Name("X-Accel-Buffering")!
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let xRequestID = HTTPField.Name("X-Request-Id")!
}
