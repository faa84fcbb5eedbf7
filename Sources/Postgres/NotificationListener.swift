import Foundation
import Logging
import Synchronization

/// Follows `LISTEN` on one or more channels on a dedicated connection owned by its own thread,
/// and hands each channel's handler the payloads of every batch of notifications on it, and an
/// empty batch after every (re)connect (notifications may have been missed while disconnected,
/// so handlers treat it as "look again").
///
/// One listener can serve every channel a process follows: each LISTEN connection is a backend
/// of PostgreSQL's own, and a process needs only one.
public final class NotificationListener: Sendable {
    /// Receives one channel's payloads of one batch, in order; empty after a (re)connect.
    public typealias Handler = @Sendable (_ payloads: [String]) -> Void

    private let connectionString: String
    private let handlers: [String: Handler]
    private let logger: Logger
    private let stopped = Atomic<Bool>(false)
    /// Where each completed check is recorded (`checkInterval`), if anyone asks.
    private let confirmation: ListenerConfirmation?
    /// How often a check runs while connected.
    static let checkInterval: Duration = .milliseconds(200)
    /// The check's round trip; a listener's backend shows it (or its last `LISTEN`) as its query
    /// in `pg_stat_activity`.
    public static let checkSQL = "SELECT 'listener check'"

    /// Listens on every channel of `handlers` on one connection; with `confirmation`, checks the
    /// connection every `checkInterval` and records each check there once the notifications it
    /// flushed are handled.
    public init(
        connectionString: String,
        handlers: [String: Handler],
        confirmation: ListenerConfirmation? = nil,
        logger: Logger = Logger(label: "sniffmeet.listen")
    ) {
        precondition(!handlers.isEmpty, "a listener needs a channel")
        self.connectionString = connectionString
        self.handlers = handlers
        self.confirmation = confirmation
        self.logger = logger
    }

    /// Listens on `channel` alone; `onNotify` runs once per batch of notifications and after
    /// every (re)connect.
    public convenience init(
        connectionString: String,
        channel: String,
        logger: Logger = Logger(label: "sniffmeet.listen"),
        onNotify: @escaping @Sendable () -> Void
    ) {
        self.init(connectionString: connectionString, handlers: [channel: { _ in onNotify() }], logger: logger)
    }

    /// Starts the listening thread.
    public func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = handlers.count == 1 ? "sniffmeet-listen-\(handlers.keys.first!)" : "sniffmeet-listen"
        thread.start()
    }

    /// Asks the thread to stop; it exits within its poll interval.
    public func stop() { stopped.store(true, ordering: .relaxed) }

    private func run() {
        var backoff: Duration = .milliseconds(50)
        while !stopped.load(ordering: .relaxed) {
            do {
                confirmation?.withdraw()
                let connection = try Connection(connectionString: connectionString)
                for channel in handlers.keys.sorted() { try connection.listen(channel) }
                backoff = .milliseconds(50)
                for handler in handlers.values { handler([]) }
                var lastCheck = ContinuousClock.now - Self.checkInterval
                while !stopped.load(ordering: .relaxed) {
                    if let confirmation, ContinuousClock.now - lastCheck >= Self.checkInterval {
                        // A round trip: every notification committed before it arrives ahead of
                        // its answer, and is handled before the check counts.
                        let start = ContinuousClock.now
                        try connection.execute(Self.checkSQL)
                        hand(try connection.waitForNotifications(timeout: .zero))
                        confirmation.confirm(start)
                        lastCheck = start
                    }
                    hand(try connection.waitForNotifications(timeout: confirmation == nil ? .milliseconds(200) : Self.checkInterval))
                }
            } catch {
                confirmation?.withdraw()
                if stopped.load(ordering: .relaxed) { break }
                let channels = handlers.keys.sorted().joined(separator: ",")
                logger.warning("listener for \(channels) lost its connection; reconnecting", metadata: ["error": "\(error)"])
                Thread.sleep(forTimeInterval: Double(backoff.components.attoseconds) / 1e18 + Double(backoff.components.seconds))
                backoff = min(backoff * 2, .seconds(2))
            }
        }
        confirmation?.withdraw()
    }

    /// Hands each channel's payloads of `received` to its handler.
    private func hand(_ received: [Connection.Notification]) {
        guard !received.isEmpty else { return }
        var batches: [String: [String]] = [:]
        for notification in received { batches[notification.channel, default: []].append(notification.payload) }
        for (channel, payloads) in batches { handlers[channel]?(payloads) }
    }
}
