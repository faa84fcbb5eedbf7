import Foundation
import Hummingbird

extension Request {
    /// Who sent the request, for budgets: the TCP peer, or with `trustForwardedFor` the last
    /// hop of `X-Forwarded-For` (the one our proxy added; earlier hops are the client's word).
    func clientAddress(_ context: GatewayRequestContext, trustForwardedFor: Bool) -> String {
        if trustForwardedFor, let forwarded = headers[.xForwardedFor],
            let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        {
            return String(last.prefix(64))
        }
        return context.remoteAddress?.ipAddress ?? "local"
    }
}
