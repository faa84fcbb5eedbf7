import Foundation
import Logging
import Synchronization

/// Follows `LISTEN channel` on a dedicated connection owned by its own thread, and calls
/// `onNotify` for every notification and after every reconnect (events may have been missed
/// while disconnected, so listeners treat a reconnect as "look again").
public final class NotificationListener: Sendable {
    private let connectionString: String
    private let channel: String
    private let onNotify: @Sendable () -> Void
    private let logger: Logger
    private let stopped = Atomic<Bool>(false)

    public init(
        connectionString: String,
        channel: String,
        logger: Logger = Logger(label: "sniffmeet.listen"),
        onNotify: @escaping @Sendable () -> Void
    ) {
        self.connectionString = connectionString
        self.channel = channel
        self.onNotify = onNotify
        self.logger = logger
    }

    /// Starts the listening thread.
    public func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = "sniffmeet-listen-\(channel)"
        thread.start()
    }

    /// Asks the thread to stop; it exits within its poll interval.
    public func stop() { stopped.store(true, ordering: .relaxed) }

    private func run() {
        var backoff: Duration = .milliseconds(50)
        while !stopped.load(ordering: .relaxed) {
            do {
                let connection = try Connection(connectionString: connectionString)
                try connection.listen(channel)
                backoff = .milliseconds(50)
                onNotify()
                while !stopped.load(ordering: .relaxed) {
                    let received = try connection.waitForNotifications(timeout: .milliseconds(200))
                    if !received.isEmpty { onNotify() }
                }
            } catch {
                if stopped.load(ordering: .relaxed) { break }
                logger.warning("listener for \(channel) lost its connection; reconnecting", metadata: ["error": "\(error)"])
                Thread.sleep(forTimeInterval: Double(backoff.components.attoseconds) / 1e18 + Double(backoff.components.seconds))
                backoff = min(backoff * 2, .seconds(2))
            }
        }
    }
}
