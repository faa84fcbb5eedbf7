@preconcurrency import Crypto
import Foundation
import Photos
import Postgres
import UUIDText

/// The `photos` table (`schema/0013_photos.sql`): the re-encoded copies of uploads, outside the
/// log. Writes run inside a command's transaction (`CommandRunner.run`'s `inSameTransaction`),
/// so a photo is stored exactly when the event naming it is appended, and an old one is deleted
/// exactly when the event replacing it is.
public struct PhotoStore: Sendable {
    let pool: ConnectionPool
    let gate: DatabaseGate

    /// A new photo's id: 128 random bits (no version or variant bits), since holding the id is
    /// all it takes to fetch the photo.
    static func newID() -> UUID {
        .randomBits()
    }

    /// The strong validator of a photo's copies: 128 bits of the image's SHA-256, in hex.
    static func etag(of photo: ProcessedPhoto) -> String {
        Hex.string(SHA256.hash(data: photo.full).prefix(16))
    }

    /// Stores `photo` as `id`, owned by `owner`.
    static func insert(_ photo: ProcessedPhoto, id: UUID, owner: UUID, etag: String, on connection: Connection) throws {
        try connection.execute(
            "INSERT INTO photos (photo_id, owner, image, thumbnail, etag) VALUES ($1, $2, $3, $4, $5)",
            [id, owner, photo.full, photo.thumbnail, etag]
        )
    }

    /// Deletes every photo of `owner` but `keep`.
    static func deleteAll(of owner: UUID, except keep: UUID? = nil, on connection: Connection) throws {
        if let keep {
            try connection.execute("DELETE FROM photos WHERE owner = $1 AND photo_id <> $2", [owner, keep])
        } else {
            try connection.execute("DELETE FROM photos WHERE owner = $1", [owner])
        }
    }

    /// True when photo `id` exists and is `owner`'s. Called after the append, whose advisory
    /// lock on the owner's stream every write of their photos takes first: no other request can
    /// delete the photo before this transaction ends (and no row lock is needed, which the
    /// runtime role could not take without UPDATE rights).
    static func owns(_ id: UUID, owner: UUID, on connection: Connection) throws -> Bool {
        try connection.execute("SELECT 1 FROM photos WHERE photo_id = $1 AND owner = $2", [id, owner]).count == 1
    }

    /// Which copy of a photo.
    enum Copy: Sendable {
        case image
        case thumbnail
    }

    /// A stored copy: its validator, and its bytes unless the client's `If-None-Match` already
    /// names that validator (then no bytes travel from the database either).
    struct Stored: Sendable {
        var etag: String
        var bytes: Data?
    }

    /// Copy `copy` of photo `id`, or nil when there is no such photo. `known` holds the
    /// validators the client has (`If-None-Match`); `anyKnown` is its `*`.
    func fetch(_ id: UUID, _ copy: Copy, known: [String], anyKnown: Bool) async throws -> Stored? {
        let sql =
            switch copy {
            case .image:
                "SELECT etag, CASE WHEN $2 OR etag = ANY($3::text[]) THEN NULL ELSE image END FROM photos WHERE photo_id = $1"
            case .thumbnail:
                "SELECT etag, CASE WHEN $2 OR etag = ANY($3::text[]) THEN NULL ELSE thumbnail END FROM photos WHERE photo_id = $1"
            }
        return try await gate.withConnection(pool) { connection in
            let result = try connection.execute(sql, [id, anyKnown, known], prepared: true)
            guard let row = result.first else { return nil }
            return Stored(etag: try row.string(0), bytes: row.withBytes(1, Self.decodeBytea) ?? nil)
        }
    }

    /// A `bytea` cell in PostgreSQL's hex text output (`\x0a1b…`) as bytes.
    static func decodeBytea(_ text: UnsafeBufferPointer<UInt8>) -> Data? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes = [UInt8](repeating: 0, count: (text.count - 2) / 2)
        var index = 2
        var position = 0
        while index < text.count {
            guard let high = value(text[index]), let low = value(text[index + 1]) else { return nil }
            bytes[position] = high << 4 | low
            position += 1
            index += 2
        }
        return Data(bytes)
    }
}
