import Commands
import Domain
import EventLog
import Foundation
import PersonalData
import Postgres
import PostgresTesting
import Synchronization

/// A handler on a fresh database, with a clock the test moves.
final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// As the runtime login, which is all `sniffmeet serve` has.
func makeHandler(_ label: String, clock: TestClock? = nil, pool size: Int = 20) throws -> (CommandHandler, ConnectionPool) {
    let pool = ConnectionPool(connectionString: try TestDatabase.createLogins(label).runtime, maxConnections: size)
    let log = EventLog(pool: pool)
    let now: @Sendable () -> Date
    if let clock { now = { clock.now } } else { now = { Date() } }
    let handler = CommandHandler(log: log, sealer: TestDatabase.sealer, walkTTL: 60, clock: now)
    return (handler, pool)
}

func dogProfile(_ nickname: String) -> DogProfile {
    DogProfile(
        nickname: nickname,
        dogName: "Bello",
        age: 3,
        sex: .male,
        neutered: true,
        size: .medium,
        keywords: [.friendly],
        profileImage: nil
    )
}

func as_(_ user: UUID) -> CommandMetadata { CommandMetadata(actor: user) }

/// Registers users with nicknames u0, u1, …
func register(_ count: Int, with handler: CommandHandler) async throws -> [UUID] {
    var users: [UUID] = []
    for index in 0..<count {
        let user = UUID()
        _ = try await handler.handle(.registerUser(userID: user, profile: dogProfile("u\(index)")), metadata: as_(user))
        users.append(user)
    }
    return users
}

/// Makes two users mates through a drop token and a mutual request.
func makeMates(_ a: UUID, _ b: UUID, with handler: CommandHandler) async throws {
    let fromB = try await handler.issueDropToken(for: b)
    let requested = try await handler.requestMate(from: a, to: b, dropToken: fromB.token, metadata: as_(a))
    guard case .mateRequested(let request)? = requested.events.first?.event else { fatalError("no request") }
    _ = try await handler.handle(.acceptMate(requestID: request.requestID, pair: MatePair(a, b), by: b), metadata: as_(b))
}

/// Every event of the log, decoded, in feed order.
func wholeLog(_ pool: ConnectionPool, sealer: EventSealer = TestDatabase.sealer) async throws -> [(recorded: RecordedEvent, event: Event)] {
    try await pool.withConnection { connection in
        var all: [(RecordedEvent, Event)] = []
        var checkpoint = LogPosition.start
        while true {
            let page = try EventLog.readFeed(on: connection, after: checkpoint, limit: 10_000)
            for recorded in page.events { all.append((recorded, try sealer.events(from: [recorded], on: connection)[0])) }
            guard let last = page.events.last else { return all }
            checkpoint = last.position
        }
    }
}

/// Shared mutable test state for concurrent tasks.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout sending Value) -> sending R) -> R { mutex.withLock(body) }
}
