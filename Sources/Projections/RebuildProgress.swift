import Foundation

/// How far a rebuild (or verify) has come; handed to a progress callback after every batch.
public struct RebuildProgress: Sendable {
    public enum Phase: String, Sendable {
        case preparing
        case catchingUp = "catching up"
        case swapping, done, cancelled
    }

    public var phase: Phase
    /// The read models being rebuilt.
    public var projectors: [String]
    /// Events read from the log so far in this run.
    public var events: Int
    /// Events that were behind the fresh tables when this run started (more may arrive).
    public var total: Int
    /// Seconds since this run started.
    public var elapsed: Double

    public var eventsPerSecond: Double { elapsed > 0 ? Double(events) / elapsed : 0 }
    /// Seconds left at the current rate, when it can be told.
    public var eta: Double? {
        guard eventsPerSecond > 0, total > events else { return nil }
        return Double(total - events) / eventsPerSecond
    }
    public var fraction: Double { total > 0 ? min(1, Double(events) / Double(total)) : 1 }

    /// One line for logs: `mates,walks catching up 120000/1000000 (12%) 85000 events/s ETA 10s`.
    public var logLine: String {
        var line = "\(projectors.joined(separator: ",")) \(phase.rawValue) \(events)/\(total) (\(Int(fraction * 100))%) "
        line += "\(Int(eventsPerSecond)) events/s"
        if let eta { line += " ETA \(Self.duration(eta))" }
        return line
    }

    /// A one-line terminal bar, redrawn in place with a carriage return.
    public func bar(width: Int = 30) -> String {
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        var line = "\r\(bar) \(Int(fraction * 100))% \(events)/\(total) \(Int(eventsPerSecond)) ev/s"
        line += eta.map { " ETA \(Self.duration($0))" } ?? ""
        return line + " [\(phase.rawValue)]\u{1B}[K"
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\(s % 3600 / 60)m" : s >= 60 ? "\(s / 60)m\(s % 60)s" : "\(s)s"
    }
}
