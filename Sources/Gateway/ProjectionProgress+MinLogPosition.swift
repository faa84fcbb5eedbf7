import EventLog
import Foundation
import Hummingbird

extension ProjectionProgress {
    /// Honors the request's `Min-Log-Position`: returns once the read models this query reads
    /// include it, or throws `503 not_caught_up` after `readYourWritesTimeout` (3 s).
    func awaitMinLogPosition(of request: Request, projectors: [String]) async throws {
        guard let text = request.headers[.minLogPosition] else { return }
        guard let position = LogPosition(text.trimmingCharacters(in: .whitespaces)) else {
            throw APIError.validation("Min-Log-Position", "Min-Log-Position must be a value of a Log-Position header")
        }
        try await waitUntil(position, projectors: projectors, timeout: readYourWritesTimeout)
    }
}
