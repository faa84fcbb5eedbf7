import Foundation

/// CPU time spent by this process's threads (by name) and by PostgreSQL's processes, read from
/// `/proc`: what a benchmark's work cost in CPU, which on a shared machine drifts far less than
/// a rate does.
struct CPUTimes {
    /// Seconds of user and system time by thread name (this process) or `postgres`/`h2load`.
    var seconds: [String: Double]

    /// Now. Threads of one name (a pool's) are summed; a thread that has exited is not counted.
    static func now() -> CPUTimes {
        var seconds: [String: Double] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            if let (name, time) = read("/proc/self/task/\(task)/stat") { seconds[name, default: 0] += time }
        }
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for process in processes where process.allSatisfy(\.isNumber) {
            if let (name, time) = read("/proc/\(process)/stat"), name == "postgres" || name == "h2load" {
                seconds[name, default: 0] += time
            }
        }
        return CPUTimes(seconds: seconds)
    }

    /// Seconds of CPU used by the child processes this process has waited for (h2load): gone
    /// from `/proc` once they exit, they are counted here.
    static var waitedChildren: Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// What was spent since `earlier`, by name, largest first.
    func since(_ earlier: CPUTimes) -> [(name: String, seconds: Double)] {
        seconds.map { (name: $0.key, seconds: $0.value - (earlier.seconds[$0.key] ?? 0)) }
            .filter { $0.seconds > 0 }
            .sorted { $0.seconds > $1.seconds }
    }

    /// `comm` and utime + stime of a `stat` file (`man 5 proc`); the name is in parentheses and
    /// may itself hold spaces or parentheses, so the fields are counted after the last `)`.
    private static func read(_ path: String) -> (String, Double)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        let name = String(text[text.index(after: open)..<close])
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (name, (user + system) / ticksPerSecond)
    }

    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
}

extension [(name: String, seconds: Double)] {
    /// "name 123 µs, …" per item of work, the largest first; small shares are summed as "other".
    func perItem(_ count: Int) -> String {
        guard count > 0 else { return "" }
        let total = reduce(0) { $0 + $1.seconds }
        var parts: [String] = []
        var other = 0.0
        for entry in self {
            if entry.seconds >= total * 0.03 {
                parts.append(String(format: "%@ %.0f", entry.name, entry.seconds / Double(count) * 1e6))
            } else {
                other += entry.seconds
            }
        }
        if other > 0 { parts.append(String(format: "other %.0f", other / Double(count) * 1e6)) }
        return String(format: "%.0f µs (", total / Double(count) * 1e6) + parts.joined(separator: ", ") + ")"
    }
}
