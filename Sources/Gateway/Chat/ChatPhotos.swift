import Foundation
import Photos
import Postgres

/// The `chat_photos` table: a photo sent in one conversation, fetched only by its two mates.
extension PhotoStore {
    static func insertChatPhoto(
        _ photo: ProcessedPhoto,
        id: UUID,
        owner: UUID,
        mate: UUID,
        etag: String,
        on connection: Connection
    )
        throws
    {
        try connection.execute(
            "INSERT INTO chat_photos (photo_id, owner, mate, image, thumbnail, etag) VALUES ($1, $2, $3, $4, $5, $6)",
            [id, owner, mate, photo.full, photo.thumbnail, etag]
        )
    }

    /// Whether `id` is a chat photo `owner` uploaded to the conversation with `mate`.
    func isChatPhoto(_ id: UUID, of owner: UUID, for mate: UUID) async throws -> Bool {
        try await gate.withConnection(pool) { connection in
            try connection.execute("SELECT 1 FROM chat_photos WHERE photo_id = $1 AND owner = $2 AND mate = $3", [id, owner, mate])
                .count == 1
        }
    }

    /// Deletes the chat photo `id` of `owner` (its message was unsent), in the caller's transaction.
    static func deleteChatPhoto(_ id: UUID, owner: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM chat_photos WHERE photo_id = $1 AND owner = $2", [id, owner])
    }

    /// Deletes every chat photo `owner` sent (their account is deleted), in the caller's transaction.
    static func deleteAllChatPhotos(of owner: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM chat_photos WHERE owner = $1", [owner])
    }

    /// Copy `copy` of chat photo `id`, if it belongs to the conversation of `viewer` and `mate`
    /// (either of them sent it to the other).
    func fetchChatPhoto(_ id: UUID, _ copy: Copy, viewer: UUID, mate: UUID, known: [String], anyKnown: Bool) async throws -> Stored? {
        let column = copy == .image ? "image" : "thumbnail"
        let sql = """
            SELECT etag, CASE WHEN $4 OR etag = ANY($5::text[]) THEN NULL ELSE \(column) END FROM chat_photos
            WHERE photo_id = $1 AND ((owner = $2 AND mate = $3) OR (owner = $3 AND mate = $2))
            """
        return try await gate.withConnection(pool) { connection in
            let result = try connection.execute(sql, [id, viewer, mate, anyKnown, known], prepared: true)
            guard let row = result.first else { return nil }
            return Stored(etag: try row.string(0), bytes: row.withBytes(1, Self.decodeBytea) ?? nil)
        }
    }
}
