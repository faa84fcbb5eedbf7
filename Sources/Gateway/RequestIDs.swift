import Synchronization

/// New request ids for requests that bring none: a random prefix drawn once per process and a
/// counter, e.g. `9f86d081884c7d65-1a2b`.
///
/// Unique within the process by the counter and, with overwhelming likelihood, across the
/// processes that log into the same place by the prefix. `UUID()` read `/dev/urandom` anew for
/// every request (open, fstat, read, close: about 2% of a GET's CPU under `scripts/bench-http`).
enum RequestIDs {
    private static let prefix: String = {
        var generator = SystemRandomNumberGenerator()
        let bits = generator.next() as UInt64
        let digits = String(bits, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }()
    private static let counter = Atomic<UInt64>(0)

    static func next() -> String {
        prefix + "-" + String(counter.wrappingAdd(1, ordering: .relaxed).newValue, radix: 16)
    }
}
