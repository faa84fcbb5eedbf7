import Foundation
import Projections
import Prometheus

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

    /// Counts one answered request and records its latency.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        registry.makeCounter(
            name: "sniffmeet_http_requests_total",
            labels: [("method", method), ("route", route), ("status", String(status))]
        ).increment()
        registry.makeDurationHistogram(
            name: "sniffmeet_http_request_duration_seconds",
            labels: [("method", method), ("route", route)],
            buckets: Self.latencyBuckets
        ).recordNanoseconds(
            duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        )
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
