import Foundation
import Projections
import Prometheus
import Synchronization

/// The gateway's Prometheus registry: request counts by route and status, request latency,
/// appended events, projector checkpoints and lag. Owned by the app (not the global
/// `MetricsSystem`), so several apps in one test process do not share counters.
public final class GatewayMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry

    private static let latencyBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(3), .seconds(10),
    ]

    /// A request's series: its counter (by method, route and status) and latency histogram.
    private struct RequestSeries: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    /// Series made so far, by their labels. The registry makes (or finds) a series by building
    /// and hashing its label set under its lock: 1.5 % of a `GET /v1/me/mates`'s server CPU,
    /// twice per request, for series that are a handful per route.
    private let requestSeries = SeriesCache<RequestSeries, (requests: Counter, latency: DurationHistogram)>()
    private let appendSeries = SeriesCache<String, Counter>()
    private let conflictSeries = SeriesCache<String, Counter>()
    private let turnWaitSeries = SeriesCache<String, Counter>()

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// The methods labelled as themselves; any other (a client may send any token) counts as
    /// `other`, so that made-up methods cannot grow the registry without end.
    static let labelledMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// Counts one answered request and records its latency.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let method = Self.labelledMethods.contains(method) ? method : "other"
        let series = requestSeries.series(RequestSeries(method: method, route: route, status: status)) {
            (
                requests: registry.makeCounter(
                    name: "sniffmeet_http_requests_total",
                    labels: [("method", method), ("route", route), ("status", String(status))]
                ),
                latency: registry.makeDurationHistogram(
                    name: "sniffmeet_http_request_duration_seconds",
                    labels: [("method", method), ("route", route)],
                    buckets: Self.latencyBuckets
                )
            )
        }
        series.requests.increment()
        series.latency.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// Counts events appended by commands of this process.
    func recordAppends(command: String, events: Int) {
        appendSeries.series(command) {
            registry.makeCounter(name: "sniffmeet_events_appended_total", labels: [("command", command)])
        }.increment(by: Int64(events))
    }

    /// Counts the version conflicts commands of this process met and ran again past (counted
    /// when the command completes; a command refused after a conflict is not): a stream many
    /// write at once (one conversation, one walk) shows here before it shows as `503`s.
    func recordConflicts(command: String, count: Int) {
        conflictSeries.series(command) {
            registry.makeCounter(name: "sniffmeet_command_conflicts_total", labels: [("command", command)])
        }.increment(by: Int64(count))
    }

    /// Counts the commands of this process that waited for their turn on a hot stream
    /// (`StreamTurns`): after a conflict there, or because others were waiting for it.
    func recordTurnWait(command: String) {
        turnWaitSeries.series(command) {
            registry.makeCounter(name: "sniffmeet_command_turn_waits_total", labels: [("command", command)])
        }.increment()
    }

    /// Updates the projector gauges (called at scrape time).
    func recordProjector(_ status: ProjectorStatus) {
        registry.makeGauge(name: "sniffmeet_projector_checkpoint_position", labels: [("projector", status.name)])
            .set(Double(status.checkpoint.position))
        registry.makeGauge(name: "sniffmeet_projector_lag_events", labels: [("projector", status.name)])
            .set(Double(status.lagEvents))
        registry.makeGauge(name: "sniffmeet_projector_lag_seconds", labels: [("projector", status.name)])
            .set(status.lagSeconds)
    }

    /// The Prometheus text exposition.
    func render() -> String { registry.emitToString() }
}

/// Metric series kept by their labels once the registry made them.
private final class SeriesCache<Key: Hashable & Sendable, Series: Sendable>: Sendable {
    private let made = Mutex<[Key: Series]>([:])

    /// The series of `key`, made by `make` the first time (the registry's own lock is taken inside
    /// ours; it never calls back).
    func series(_ key: Key, make: () -> Series) -> Series {
        made.withLock { made in
            if let series = made[key] { return series }
            let series = make()
            made[key] = series
            return series
        }
    }
}
