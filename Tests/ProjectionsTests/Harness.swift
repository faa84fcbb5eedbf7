import Benchmarks
import Domain
import EventLog
import Foundation
import Postgres
import PostgresTesting
import Projections
import XCTest

/// A fresh database with its log, and a synthetic workload appended through `EventLog`.
/// Appends, queries and runners work as the runtime login, as `sniffmeet serve` does; rebuilds
/// and imports need `ownerConnectionString`, as `sniffmeet rebuild` and `replay --import` use.
final class Harness: @unchecked Sendable {
    let connectionString: String
    let ownerConnectionString: String
    let pool: ConnectionPool
    let log: EventLog
    var workload: SyntheticWorkload
    var appendedEvents = 0
    var lastPosition = LogPosition.start

    /// `sealed`: personal fields sealed and nickname streams named as the server does.
    init(_ label: String, seed: UInt64 = 42, users: Int = 60, sealed: Bool = false) throws {
        let logins = try TestDatabase.createLogins(label)
        connectionString = logins.runtime
        ownerConnectionString = logins.owner
        pool = ConnectionPool(connectionString: connectionString, maxConnections: 8)
        log = EventLog(pool: pool)
        workload = SyntheticWorkload(seed: seed, users: users, sealer: sealed ? TestDatabase.sealer : nil)
    }

    /// Appends `count` commands one after another (a single writer keeps the workload's versions exact).
    func append(_ count: Int) async throws {
        for _ in 0..<count {
            let step = workload.next()
            let keys = workload.takeNewKeys()
            if !keys.isEmpty { try await pool.withConnection { try BulkLoader.storeKeys(keys, on: $0) } }
            let result = try await log.append(commandID: step.commandID, expectations: step.expectations, events: step.events)
            appendedEvents += step.events.count
            lastPosition = result.last
        }
    }

    /// Runs `body` on a pooled connection (libpq calls stay off the cooperative threads).
    func query<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await pool.withConnection(body)
    }

    /// Runs `body` on a connection of the owner, on a thread of its own (operator work such as
    /// TRUNCATE, which the runtime login may not do).
    func asOwner<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let connectionString = ownerConnectionString
        return try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body(Connection(connectionString: connectionString)) }) }.start()
        }
    }

    /// The read models as the workload's own fold of every stream says they must be.
    func expected() -> ReadModelRows {
        var rows = ReadModelRows()
        for (stream, state) in workload.states {
            switch state {
            case .user(let user):
                guard let profile = user.profile, let id = user.userID, let at = user.registeredAt else { continue }
                rows.profiles.append(
                    ReadModelRows.profile(
                        id,
                        profile.nickname,
                        profile.dogName,
                        profile.age,
                        profile.sex.rawValue,
                        profile.neutered,
                        profile.size.rawValue,
                        profile.keywords.map(\.rawValue),
                        profile.profileImage,
                        at
                    )
                )
            case .mates(let mates):
                if case .mates(let since) = mates.status, let pair = MatePair(stream: stream) {
                    rows.mates.append(ReadModelRows.mate(pair.lo, pair.hi, since))
                    rows.mates.append(ReadModelRows.mate(pair.hi, pair.lo, since))
                }
                for request in mates.requests.values {
                    rows.mateRequests.append(
                        ReadModelRows.request(
                            request.requestID,
                            request.from,
                            request.to,
                            request.status.rawValue,
                            request.createdAt,
                            request.updatedAt
                        )
                    )
                }
            case .walk(let walk):
                guard let w = walk.request, let status = walk.status else { continue }
                rows.walks.append(
                    ReadModelRows.walk(
                        w.walkID,
                        w.from,
                        w.to,
                        w.message,
                        w.latitude,
                        w.longitude,
                        w.placeName,
                        status.rawValue,
                        w.createdAt,
                        w.expiresAt,
                        walk.answeredAt
                    )
                )
            case .nickname, .walkLog, .chat:
                continue
            }
        }
        for (user, ids) in workload.inbox {
            for id in ids { rows.notifications.append("\(id.lowercasedString)|\(user.lowercasedString)") }
        }
        return rows.sorted()
    }

    /// The read models as stored in `tables`.
    func actual(_ tables: TableSet = .live) async throws -> ReadModelRows {
        try await query { try ReadModelRows.load(tables, on: $0) }
    }
}

extension MatePair {
    init?(stream: StreamName) {
        let raw = stream.rawValue.dropFirst("mates-".count)
        guard raw.count == 73, let a = UUID(uuidString: String(raw.prefix(36))), let b = UUID(uuidString: String(raw.suffix(36)))
        else { return nil }
        self.init(a, b)
    }
}

/// Read-model rows as comparable text lines, built the same way from the fold and from the tables.
struct ReadModelRows: Equatable, Sendable {
    var profiles: [String] = []
    var mates: [String] = []
    var mateRequests: [String] = []
    var walks: [String] = []
    var notifications: [String] = []

    var total: Int { profiles.count + mates.count + mateRequests.count + walks.count + notifications.count }

    func sorted() -> ReadModelRows {
        ReadModelRows(
            profiles: profiles.sorted(),
            mates: mates.sorted(),
            mateRequests: mateRequests.sorted(),
            walks: walks.sorted(),
            notifications: notifications.sorted()
        )
    }

    static func t(_ date: Date?) -> String { date.map { String(Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? "-" }
    static func u(_ id: UUID) -> String { id.lowercasedString }

    static func profile(
        _ id: UUID,
        _ nickname: String,
        _ dogName: String,
        _ age: Int,
        _ sex: String,
        _ neutered: Bool,
        _ size: String,
        _ keywords: [String],
        _ image: String?,
        _ created: Date
    ) -> String {
        "\(u(id))|\(nickname)|\(dogName)|\(age)|\(sex)|\(neutered)|\(size)|\(keywords.joined(separator: ","))|\(image ?? "-")|\(t(created))"
    }
    static func mate(_ user: UUID, _ mate: UUID, _ since: Date) -> String { "\(u(user))|\(u(mate))|\(t(since))" }
    static func request(_ id: UUID, _ from: UUID, _ to: UUID, _ status: String, _ created: Date, _ updated: Date) -> String {
        "\(u(id))|\(u(from))|\(u(to))|\(status)|\(t(created))|\(t(updated))"
    }
    static func walk(
        _ id: UUID,
        _ from: UUID,
        _ to: UUID,
        _ message: String,
        _ lat: Double,
        _ lon: Double,
        _ place: String?,
        _ status: String,
        _ created: Date,
        _ expires: Date,
        _ answered: Date?
    ) -> String {
        "\(u(id))|\(u(from))|\(u(to))|\(message)|\(lat)|\(lon)|\(place ?? "-")|\(status)|\(t(created))|\(t(expires))|\(t(answered))"
    }

    static func load(_ tables: TableSet, on c: Connection) throws -> ReadModelRows {
        var rows = ReadModelRows()
        for r in try c.execute(
            "SELECT user_id, nickname, dog_name, age, sex, neutered, size, array_to_string(keywords, ','), profile_image, created_at FROM \(tables("profiles"))"
        ).rows {
            rows.profiles.append(
                profile(
                    try r.uuid(0),
                    try r.string(1),
                    try r.string(2),
                    try r.int(3),
                    try r.string(4),
                    try r.bool(5),
                    try r.string(6),
                    try r.string(7).split(separator: ",").map(String.init),
                    r.optionalString(8),
                    try r.date(9)
                )
            )
        }
        for r in try c.execute("SELECT user_id, mate_id, mates_since FROM \(tables("mates"))").rows {
            rows.mates.append(mate(try r.uuid(0), try r.uuid(1), try r.date(2)))
        }
        for r in try c.execute("SELECT request_id, from_user, to_user, status, created_at, updated_at FROM \(tables("mate_requests"))").rows
        {
            rows.mateRequests.append(request(try r.uuid(0), try r.uuid(1), try r.uuid(2), try r.string(3), try r.date(4), try r.date(5)))
        }
        for r in try c.execute(
            "SELECT walk_id, from_user, to_user, message, latitude, longitude, place_name, status, created_at, expires_at, answered_at FROM \(tables("walks"))"
        ).rows {
            rows.walks.append(
                walk(
                    try r.uuid(0),
                    try r.uuid(1),
                    try r.uuid(2),
                    try r.string(3),
                    try r.double(4),
                    try r.double(5),
                    r.optionalString(6),
                    try r.string(7),
                    try r.date(8),
                    try r.date(9),
                    try r.optionalDate(10)
                )
            )
        }
        for r in try c.execute("SELECT notification_id, user_id FROM \(tables("notifications"))").rows {
            rows.notifications.append("\(u(try r.uuid(0)))|\(u(try r.uuid(1)))")
        }
        return rows.sorted()
    }
}

/// Compares table by table so a failure names the read model and a few differing rows.
func assertSameRows(_ actual: ReadModelRows, _ expected: ReadModelRows, file: StaticString = #filePath, line: UInt = #line) {
    func compare(_ name: String, _ a: [String], _ e: [String]) {
        if a == e { return }
        let missing = Set(e).subtracting(a).sorted().prefix(3)
        let extra = Set(a).subtracting(e).sorted().prefix(3)
        XCTFail(
            "\(name): \(a.count) rows, expected \(e.count); missing \(Array(missing)); unexpected \(Array(extra))",
            file: file,
            line: line
        )
    }
    compare("profiles", actual.profiles, expected.profiles)
    compare("mates", actual.mates, expected.mates)
    compare("mate_requests", actual.mateRequests, expected.mateRequests)
    compare("walks", actual.walks, expected.walks)
    compare("notifications", actual.notifications, expected.notifications)
}
