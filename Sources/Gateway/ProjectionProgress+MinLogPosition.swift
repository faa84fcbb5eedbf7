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
        // Reading on a replica: its own checkpoint rows (they replicate with the read models)
        // must show the position within the replica's wait; else the primary takes the read.
        if let choice = ReadChoice.current, choice.isOnReplica {
            if await choice.replicas.reached(position, projectors: projectors, within: min(choice.replicas.wait, readYourWritesTimeout)) {
                return
            }
            choice.usePrimary()
        }
        try await waitUntil(position, projectors: projectors, timeout: readYourWritesTimeout)
    }
}
