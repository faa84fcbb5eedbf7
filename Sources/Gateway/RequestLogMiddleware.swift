import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id (the client's `X-Request-Id` if it is sane, else the `RequestID`
/// Hummingbird made for it), puts it on the request's logger and on the answer, and logs one
/// structured line per request.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let offered = request.headers[.xRequestID]
        // Hummingbird gives every request a `RequestID` (a random per-process prefix and a
        // counter, no system call) under `hb.request.id`; `context.id` is its text.
        let id = offered.flatMap { Self.isSane($0) ? $0 : nil } ?? context.id
        // One id per line, under the documented key, rendered once: Hummingbird's metadata
        // value renders its id anew on every line, and could be a second id beside the client's.
        context.logger[metadataKey: "request_id"] = .string(id)
        context.logger[metadataKey: "hb.request.id"] = nil
        let start = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[.xRequestID] = id
        let elapsed = ContinuousClock.now - start
        // Keys in order, as the line has them.
        let pairs: [(key: String, value: String)] = [
            ("method", request.method.rawValue),
            ("ms", Self.milliseconds(elapsed)),
            ("path", request.uri.path),
            ("route", context.endpointPath ?? "unmatched"),
            ("status", String(response.status.code)),
        ]
        if let logfmt = context.logger.handler as? LogfmtLogHandler {
            logfmt.log(level: .info, message: "request", orderedPairs: pairs)
        } else {
            context.logger.info("request", metadata: Logger.Metadata(uniqueKeysWithValues: pairs.map { ($0.key, .string($0.value)) }))
        }
        return response
    }

    /// `duration` in milliseconds with three decimals (to the microsecond): `1.934`.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let micros = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        let fraction = String(micros % 1000)
        return String(micros / 1000) + "." + String(repeating: "0", count: 3 - fraction.utf8.count) + fraction
    }

    /// Request ids go into logs and headers: keep them short and printable.
    static func isSane(_ id: String) -> Bool {
        (1...100).contains(id.utf8.count) && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }
}
