@preconcurrency import Crypto
import Foundation
import PersonalData
import Postgres
import UUIDText
import WalkRoutes

/// Why a stored route or zone could not be read back.
enum WalkRouteStoreError: Error {
    /// The owner's data key is gone (account deleted) or the sealed bytes do not open.
    case unreadable
}

/// The `walk_routes` and `privacy_zones` tables (`schema/0020_walk_log.sql`): routes and zones
/// outside the log, sealed. Each route has a key of its own (AES-256-GCM), kept in its row
/// sealed under the owner's data key; deleting the row destroys the key, and deleting the
/// account destroys the owner's key too. Writes run inside the command's transaction, so a
/// route is stored exactly when its `walk_logged` is appended and gone exactly when its
/// `walk_log_deleted` is.
struct WalkRouteStore: Sendable {
    let pool: ConnectionPool
    let gate: DatabaseGate
    let keys: DataKeys

    /// The SHA-256 of a route's stored plain bytes, lowercase hex: what `walk_logged` carries.
    static func digest(_ plain: [UInt8]) -> String {
        Hex.string(SHA256.hash(data: plain))
    }

    static func binding(_ purpose: String, _ id: UUID) -> Data { Data("sniffmeet \(purpose) \(id.lowercasedString)".utf8) }

    /// The owner's data key, read on `connection` (inside its transaction), created if new. An
    /// erased owner (their account deleted meanwhile) is `PersonalDataError.erased`, which a
    /// command answers as `401` and a read as `404`.
    func ownerKey(_ owner: UUID, creating: Bool, on connection: Connection) throws -> SymmetricKey {
        switch try keys.entries(for: [owner], creating: creating, on: connection)[owner] {
        case .key(let key): return key
        case .erased: throw PersonalDataError.erased(owner)
        case nil: throw PersonalDataError.missingKey(owner)
        }
    }

    /// Stores `plain` (the encoded route) as walk log `id`'s, under a fresh key of its own.
    func insert(_ plain: [UInt8], id: UUID, owner: UUID, on connection: Connection) throws {
        let routeKey = SymmetricKey.fresh256()
        let route = try AES.GCM.seal(plain, using: routeKey, nonce: .fresh(), authenticating: Self.binding("walk route", id)).combined!
        let sealedKey = try AES.GCM.seal(
            routeKey.withUnsafeBytes { Data($0) },
            using: try ownerKey(owner, creating: true, on: connection),
            nonce: .fresh(),
            authenticating: Self.binding("walk route key", id)
        ).combined!
        try connection.execute(
            "INSERT INTO walk_routes (walk_log_id, owner, sealed_key, route) VALUES ($1, $2, $3, $4) ON CONFLICT (walk_log_id) DO NOTHING",
            [id, owner, sealedKey, route]
        )
    }

    /// Deletes walk log `id`'s route, key and points together.
    static func delete(_ id: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM walk_routes WHERE walk_log_id = $1", [id])
    }

    /// Deletes every route and the privacy zones of `owner` (their account is being deleted).
    static func deleteAll(of owner: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM walk_routes WHERE owner = $1", [owner])
        try connection.execute("DELETE FROM privacy_zones WHERE user_id = $1", [owner])
    }

    /// The stored points of walk log `id`, or nil when it has no route (deleted).
    func route(_ id: UUID) async throws -> [TrackPoint]? {
        try await gate.withConnection(pool) { connection in
            let result = try connection.execute(
                "SELECT owner, sealed_key, route FROM walk_routes WHERE walk_log_id = $1",
                [id],
                prepared: true
            )
            guard let row = result.first else { return nil }
            let owner = try row.uuid(0)
            guard let sealedKey = row.withBytes(1, PhotoStore.decodeBytea) ?? nil,
                let sealedRoute = row.withBytes(2, PhotoStore.decodeBytea) ?? nil
            else { throw WalkRouteStoreError.unreadable }
            let key = try ownerKey(owner, creating: false, on: connection)
            guard
                let keyBytes = try? AES.GCM.open(
                    AES.GCM.SealedBox(combined: sealedKey),
                    using: key,
                    authenticating: Self.binding("walk route key", id)
                ),
                let plain = try? AES.GCM.open(
                    AES.GCM.SealedBox(combined: sealedRoute),
                    using: SymmetricKey(data: keyBytes),
                    authenticating: Self.binding("walk route", id)
                ),
                let points = RouteCoding.decode(plain)
            else { throw WalkRouteStoreError.unreadable }
            return points
        }
    }

    // MARK: Privacy zones

    /// Replaces `user`'s zones (sealed under their data key) inside the caller's transaction.
    func putZones(_ zones: [StoredZone], of user: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM privacy_zones WHERE user_id = $1", [user])
        guard !zones.isEmpty else { return }
        let plain = StoredZone.encode(zones)
        let sealed = try AES.GCM.seal(
            plain,
            using: try ownerKey(user, creating: true, on: connection),
            nonce: .fresh(),
            authenticating: Self.binding("privacy zones", user)
        )
        .combined!
        try connection.execute("INSERT INTO privacy_zones (user_id, sealed) VALUES ($1, $2)", [user, sealed])
    }

    /// `user`'s zones (empty when none).
    func zones(of user: UUID) async throws -> [StoredZone] {
        try await gate.withConnection(pool) { connection in try zones(of: user, on: connection) }
    }

    func zones(of user: UUID, on connection: Connection) throws -> [StoredZone] {
        let result = try connection.execute("SELECT sealed FROM privacy_zones WHERE user_id = $1", [user], prepared: true)
        guard let row = result.first else { return [] }
        guard let sealed = row.withBytes(0, PhotoStore.decodeBytea) ?? nil,
            let plain = try? AES.GCM.open(
                AES.GCM.SealedBox(combined: sealed),
                using: try ownerKey(user, creating: false, on: connection),
                authenticating: Self.binding("privacy zones", user)
            ),
            let zones = StoredZone.decode(Array(plain))
        else { throw WalkRouteStoreError.unreadable }
        return zones
    }
}

/// A privacy zone as stored: the place the owner chose, its radius, and the fixed random
/// offset of the circle actually cut (drawn once, when the zone is set).
struct StoredZone: Sendable, Equatable {
    var centre: Coordinate
    var radiusMetres: Double
    /// The centre of the circle cut for readers: `centre` moved by up to a quarter of the radius.
    var cutCentre: Coordinate

    /// A zone around `centre` with a fresh random offset.
    static func drawn(centre: Coordinate, radiusMetres: Double) -> StoredZone {
        var generator = SystemRandomNumberGenerator()
        let bearing = Double.random(in: 0..<360, using: &generator)
        // Uniform over the disc of a quarter radius.
        let distance = radiusMetres / 4 * Double.random(in: 0...1, using: &generator).squareRoot()
        return StoredZone(
            centre: centre,
            radiusMetres: radiusMetres,
            cutCentre: Geodesic.offset(centre, bearing: bearing, distance: distance)
        )
    }

    var circle: PrivacyCircle { PrivacyCircle(centre: cutCentre, radiusMetres: radiusMetres) }

    static func encode(_ zones: [StoredZone]) -> [UInt8] {
        RouteCoding.encode(
            zones.flatMap { z in
                [
                    TrackPoint(time: z.radiusMetres, latitude: z.centre.latitude, longitude: z.centre.longitude),
                    TrackPoint(time: 0, latitude: z.cutCentre.latitude, longitude: z.cutCentre.longitude),
                ]
            }
        )
    }

    static func decode(_ bytes: [UInt8]) -> [StoredZone]? {
        guard let points = RouteCoding.decode(bytes), points.count % 2 == 0 else { return nil }
        return stride(from: 0, to: points.count, by: 2).map { i in
            StoredZone(centre: points[i].coordinate, radiusMetres: points[i].time, cutCentre: points[i + 1].coordinate)
        }
    }
}
