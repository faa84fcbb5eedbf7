import Synchronization

/// When a `NotificationListener` last proved that nothing sent to it is still on its way: the
/// moment its latest check began (a round trip on the LISTEN connection; PostgreSQL delivers
/// every notification committed before a query ahead of that query's answer, and the listener
/// hands them to their handlers before it records the check). Nil while the listener is not
/// connected, or has not completed a check since it (re)connected.
///
/// A cache that a notification empties may trust an entry as long as the latest check is
/// recent: whatever was announced before it has been applied.
public final class ListenerConfirmation: Sendable {
    private let latest = Mutex<ContinuousClock.Instant?>(nil)

    public init() {}

    /// The start of the latest completed check, nil when there is none since the last (re)connect.
    public var confirmedAt: ContinuousClock.Instant? { latest.withLock { $0 } }

    /// A check that began at `start` completed and its notifications were handled.
    func confirm(_ start: ContinuousClock.Instant) {
        latest.withLock { latest in if latest.map({ $0 < start }) ?? true { latest = start } }
    }

    /// The connection is gone (or new): nothing is confirmed until the next check.
    func withdraw() { latest.withLock { $0 = nil } }
}
