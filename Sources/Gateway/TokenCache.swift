import Foundation
import Synchronization

/// A bounded map from token hash to user id, shared by all requests of a process.
///
/// Keyed by the SHA-256 of the token (never the token itself), and only filled after the
/// database confirmed the hash, so it answers exactly what the database would. When full it is
/// simply emptied: simpler than LRU, and a miss only costs one query.
final class TokenCache: Sendable {
    private let capacity: Int
    private let entries = Mutex<[String: UUID]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    func user(for hash: String) -> UUID? {
        entries.withLock { $0[hash] }
    }

    func forget(_ user: UUID) {
        entries.withLock { entries in entries = entries.filter { $0.value != user } }
    }

    func remember(_ hash: String, _ user: UUID) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[hash] = user
        }
    }
}
