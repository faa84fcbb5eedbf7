import EventLog
import Hummingbird

/// A command's `204 No Content`, with its `Log-Position`.
struct NoContent: ResponseGenerator {
    var logPosition: LogPosition?

    func response(from request: Request, context: some RequestContext) -> Response {
        .noContent(logPosition: logPosition?.description)
    }
}
