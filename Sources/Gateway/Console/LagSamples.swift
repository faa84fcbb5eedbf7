import Foundation
import ServiceLifecycle
import Synchronization

/// Each projector's lag over the last hour, sampled every few seconds by this process and kept
/// in memory (the projections page's charts). Samples are per process: a restarted server
/// starts a new hour.
public final class LagSamples: Sendable {
    public struct Sample: Sendable {
        public var at: Date
        public var lagEvents: Int64
        public var lagSeconds: Double
    }

    /// How far back samples are kept.
    public static let window: TimeInterval = 3600
    private let samples = Mutex<[String: [Sample]]>([:])

    public init() {}

    /// Records one sample per projector, dropping those older than the window.
    public func record(_ lags: [(name: String, lagEvents: Int64, lagSeconds: Double)], at now: Date = Date()) {
        samples.withLock { samples in
            for lag in lags {
                var list = samples[lag.name, default: []]
                list.append(Sample(at: now, lagEvents: lag.lagEvents, lagSeconds: lag.lagSeconds))
                if let first = list.first, now.timeIntervalSince(first.at) > Self.window {
                    list.removeAll { now.timeIntervalSince($0.at) > Self.window }
                }
                samples[lag.name] = list
            }
        }
    }

    /// The samples of `name`, oldest first.
    public func samples(of name: String) -> [Sample] { samples.withLock { $0[name] ?? [] } }
}

/// Samples every projector's lag every `interval` while the server runs.
struct LagSamplingService: Service {
    let progress: ProjectionProgress
    let samples: LagSamples
    var interval: Duration = .seconds(5)

    func run() async throws {
        // Cancelled at graceful shutdown: the sleep between samples ends at once (waiting out
        // the interval held every server's shutdown, and every gateway test, for 5 seconds).
        try? await cancelWhenGracefulShutdown { [progress, samples, interval] in
            while !Task.isCancelled {
                if let statuses = try? await progress.status() {
                    samples.record(statuses.map { ($0.name, $0.lagEvents, $0.lagSeconds) })
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}

/// Small line charts drawn on the server as SVG: presentation attributes only (no style
/// attributes, which the console's policy forbids), every text escaped.
enum SVGChart {
    static let width = 480.0
    static let height = 120.0
    static let margin = 30.0

    /// A line of `points` (x in seconds before now, y a value) over the last `span` seconds,
    /// with the largest value and the time axis labelled.
    static func line(_ points: [(secondsAgo: Double, value: Double)], span: Double, unit: String, title: String) -> String {
        let top = max(points.map(\.value).max() ?? 0, 1)
        let plotWidth = width - 2 * margin
        let plotHeight = height - 2 * margin
        func x(_ secondsAgo: Double) -> Double { margin + plotWidth * (1 - min(max(secondsAgo, 0), span) / span) }
        func y(_ value: Double) -> Double { margin + plotHeight * (1 - value / top) }
        let path = points.map { String(format: "%.1f,%.1f", x($0.secondsAgo), y($0.value)) }.joined(separator: " ")
        let minutes = Int(span / 60)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" role="img">
            <title>\(escape(title))</title>
            <rect x="0" y="0" width="\(Int(width))" height="\(Int(height))" fill="#ffffff"/>
            <line x1="\(margin)" y1="\(height - margin)" x2="\(width - margin)" y2="\(height - margin)" stroke="#9aa5b1"/>
            <line x1="\(margin)" y1="\(margin)" x2="\(margin)" y2="\(height - margin)" stroke="#9aa5b1"/>
            <text x="\(margin)" y="\(margin - 8)" font-family="sans-serif" font-size="11" fill="#3d4852">\(escape(title)) · max \(escape(format(top))) \(escape(unit))</text>
            <text x="\(margin)" y="\(height - 10)" font-family="sans-serif" font-size="10" fill="#5b6670">−\(minutes) min</text>
            <text x="\(width - margin)" y="\(height - 10)" font-family="sans-serif" font-size="10" fill="#5b6670" text-anchor="end">now</text>
            \(points.isEmpty ? "<text x=\"\(width / 2)\" y=\"\(height / 2)\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#5b6670\" text-anchor=\"middle\">no samples yet</text>" : "<polyline points=\"\(path)\" fill=\"none\" stroke=\"#2f6fab\" stroke-width=\"1.5\"/>")
            </svg>
            """
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
