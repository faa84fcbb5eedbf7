/// Closed-loop throughput: concurrent loops doing one operation after another for a while.
public enum Throughput {
    /// Runs `operation` in `writers` concurrent loops for `seconds`; returns operations/s.
    public static func measure(
        writers: Int,
        seconds: Double,
        _ operation: @escaping @Sendable () async throws -> Void
    ) async throws -> Double {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let started = ContinuousClock.now
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<writers {
                group.addTask {
                    var count = 0
                    while ContinuousClock.now < deadline {
                        try await operation()
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = (ContinuousClock.now - started).components
        return Double(total) / (Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
    }

    /// The middle value (the upper one of an even count); 0 for none. Benchmarks alternate
    /// short rounds of both sides and compare medians, so drift of a shared machine hits both.
    public static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}

/// `text` left-aligned in a column of `width` characters (at least one space follows it).
public func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}
