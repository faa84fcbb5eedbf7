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

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// Counts one answered request and records its latency. The registry validates names and
    /// labels and looks them up under its lock on every `make…` call; a route's handles are
    /// made once and kept here.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let handles = requestHandles(RequestKey(method: method, route: route, status: status))
        handles.count.increment()
        handles.latency.recordNanoseconds(
            duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        )
    }

    /// The labels of one answered request's series.
    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    /// A request series' counter and its route's latency histogram.
    private struct RequestHandles: Sendable {
        var count: Counter
        var latency: DurationHistogram
    }

    /// Route templates and statuses are few (the router's routes, `unmatched`), so the cache
    /// stays small.
    private let requestSeries = Mutex<[RequestKey: RequestHandles]>([:])

    private func requestHandles(_ key: RequestKey) -> RequestHandles {
        if let known = requestSeries.withLock({ $0[key] }) { return known }
        let made = RequestHandles(
            count: registry.makeCounter(
                name: "sniffmeet_http_requests_total",
                labels: [("method", key.method), ("route", key.route), ("status", String(key.status))]
            ),
            latency: registry.makeDurationHistogram(
                name: "sniffmeet_http_request_duration_seconds",
                labels: [("method", key.method), ("route", key.route)],
                buckets: Self.latencyBuckets
            )
        )
        requestSeries.withLock { $0[key] = made }
        return made
    }

    /// Counts events appended by commands of this process.
    func recordAppends(command: String, events: Int) {
        registry.makeCounter(name: "sniffmeet_events_appended_total", labels: [("command", command)]).increment(by: Int64(events))
    }

    /// Counts the version conflicts commands of this process met and ran again past (counted
    /// when the command completes; a command refused after a conflict is not): a stream many
    /// write at once (one conversation, one walk) shows here before it shows as `503`s.
    func recordConflicts(command: String, count: Int) {
        registry.makeCounter(name: "sniffmeet_command_conflicts_total", labels: [("command", command)]).increment(by: Int64(count))
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
