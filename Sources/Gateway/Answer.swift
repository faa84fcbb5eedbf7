import EventLog
import Foundation
import HTTPTypes
import Hummingbird
import JSONText

/// A route's JSON answer: an API object that writes itself, its status, and for a command's
/// answer the `Log-Position` to read it back with. Encoded once, when Hummingbird asks for the
/// response.
struct Answer<Value: JSONObjectWritable>: ResponseGenerator {
    var value: Value
    var status: HTTPResponse.Status
    var logPosition: LogPosition?
    /// The chat message this answer shows: its stored idempotent answer is deleted when the
    /// message is unsent (`IdempotencyMiddleware`).
    var erasedWith: UUID?

    init(_ value: Value, status: HTTPResponse.Status = .ok, logPosition: LogPosition? = nil, erasedWith: UUID? = nil) {
        self.value = value
        self.status = status
        self.logPosition = logPosition
        self.erasedWith = erasedWith
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = Response.json(try ResponseEncoder().bytes(value), status: status, logPosition: logPosition?.description)
        if let erasedWith { response.headers[.eraseAnswerWith] = erasedWith.lowercasedString }
        return response
    }
}
