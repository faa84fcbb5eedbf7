import ArgumentParser
import Benchmarks
import EventLog
import Foundation
import Logging
import PersonalData
import Postgres
import Projections
import Synchronization

/// `sniffmeet bench lag`: projection lag under a steady command rate. Writers append commands
/// decided by the domain (independent synthetic workloads) at a fixed pace; for each command
/// the time from its commit (the append returning) until every read model includes it (the
/// runner's checkpoints pass its position) is recorded; p50/p99/max are printed.
struct BenchLagCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lag",
        abstract: "Projection lag p50/p99 under a steady command rate."
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "commands per second, all writers together") var rate = 1000
    @Option(help: "seconds to measure") var seconds = 10.0
    @Option(help: "concurrent writers") var writers = 8

    func run() async throws {
        let logger = Logger(label: "sniffmeet.bench")
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        let connectionString = try await BenchAppendCommand.freshDatabase(opened, name: "sniffmeet_bench_lag")
        let pool = ConnectionPool(connectionString: connectionString, maxConnections: writers + 4)
        let log = EventLog(pool: pool)
        var options = ProjectionRunner.Options()
        options.batchSize = 1000
        let runner = ProjectionRunner(
            log: log,
            sealer: try opened.sealer(),
            connectionString: connectionString,
            options: options,
            logger: logger
        )
        runner.start()

        let clock = ContinuousClock()
        let samples = LagSamples()
        let interval = Duration.seconds(Double(writers) / Double(rate))
        let start = clock.now + .milliseconds(200)
        let end = start + .seconds(seconds)
        let writerCount = writers
        let commands = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<writerCount {
                group.addTask {
                    // Disjoint users and nicknames per writer: no writer waits on another's streams.
                    var workload = SyntheticWorkload(
                        seed: UInt64(index + 1),
                        users: 200,
                        walkTTL: 60,
                        nicknamePrefix: String(UnicodeScalar(UInt8(ascii: "a") + UInt8(index % 26)))
                    )
                    var due = start + interval * (Double(index) / Double(writerCount))
                    var sent = 0
                    var measuring: [Task<Void, Never>] = []
                    while due < end {
                        try await Task.sleep(until: due, clock: clock)
                        let step = workload.next()
                        let result = try await log.append(commandID: step.commandID, expectations: step.expectations, events: step.events)
                        let committed = clock.now
                        sent += 1
                        measuring.append(
                            Task {
                                let seen = (try? await runner.waitUntil(position: result.last, timeout: .seconds(5))) ?? false
                                samples.record(seen ? clock.now - committed : nil)
                            }
                        )
                        due += interval
                    }
                    samples.finishedSending(at: clock.now)
                    for task in measuring { await task.value }
                    return sent
                }
            }
            return try await group.reduce(0, +)
        }
        let sending = samples.lastSend.map { $0 - start } ?? .seconds(seconds)
        let elapsed = Double(sending.components.seconds) + Double(sending.components.attoseconds) / 1e18
        await runner.stop()
        await pool.close()

        let sorted = samples.latencies.sorted()
        func percentile(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
            return String(format: "%.1f ms", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000)
        }
        print(
            "sniffmeet bench lag: \(commands) commands by \(writerCount) writers at \(rate)/s target over \(seconds) s (\(Int(Double(commands) / max(elapsed, 0.001))) /s achieved, sending took \(String(format: "%.1f", elapsed)) s)"
        )
        print(
            "lag from commit to visible in every read model: p50 \(percentile(0.5)), p99 \(percentile(0.99)), max \(percentile(1)) (goal p99 < 100 ms)"
        )
        if samples.timeouts > 0 { print("not visible within 5 s: \(samples.timeouts) commands") }
    }
}

/// Lag samples collected by many tasks.
final class LagSamples: Sendable {
    private let state = Mutex<(latencies: [Duration], timeouts: Int, lastSend: ContinuousClock.Instant?)>(([], 0, nil))
    func finishedSending(at instant: ContinuousClock.Instant) {
        state.withLock { $0.lastSend = max($0.lastSend ?? instant, instant) }
    }
    var lastSend: ContinuousClock.Instant? { state.withLock { $0.lastSend } }
    /// nil: not visible within the timeout.
    func record(_ latency: Duration?) {
        state.withLock { if let latency { $0.latencies.append(latency) } else { $0.timeouts += 1 } }
    }
    var latencies: [Duration] { state.withLock { $0.latencies } }
    var timeouts: Int { state.withLock { $0.timeouts } }
}
