import Crypto
import Domain
import EventLog
import Foundation
import Postgres

/// Drop tokens: what one phone hands another in person so that a mate request can follow.
///
/// Stored in a plain table, not the log (see schema/0002): they are short-lived secrets, and
/// only their SHA-256 is kept. The token itself is a `SecretToken`.
enum DropTokens {
    static func hash(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }

    static func store(hash: Data, user: UUID, expiresAt: Date, on connection: Connection) throws {
        try connection.execute(
            "INSERT INTO drop_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, $3)",
            [hash, user, expiresAt],
            prepared: true
        )
    }

    /// The presented token as the domain sees it. Not locked: two requests that both find it
    /// unspent race in their appends, where only one spend can hold (`spending`).
    static func presented(hash: Data, on connection: Connection) throws -> PresentedDropToken? {
        try presented(from: connection.execute(reading(hash: hash)))
    }

    /// The statement of `presented(hash:on:)`, for a pipeline with the streams' read.
    static func reading(hash: Data) -> Connection.Statement {
        Connection.Statement(
            "SELECT user_id, expires_at, used_at IS NOT NULL FROM drop_tokens WHERE token_hash = $1",
            [hash],
            prepared: true
        )
    }

    /// The token as `reading(hash:)` found it.
    static func presented(from result: QueryResult) throws -> PresentedDropToken? {
        guard let row = result.first else { return nil }
        return PresentedDropToken(issuedBy: try row.uuid(0), expiresAt: try row.date(1), used: try row.bool(2))
    }

    /// Spends the token on its own (a repeated request that appends nothing); false when it was
    /// spent already.
    static func spend(hash: Data, on connection: Connection) throws -> Bool {
        try connection.execute("UPDATE drop_tokens SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL", [hash])
            .affectedRows > 0
    }

    /// The guarded row (`AppendRequest.guardedRows`) that spends the token in the append of the
    /// request's first event `eventID`, and only if that append wrote. The token must be as the
    /// request was decided on (`presented`: its issuer and expiry, unspent); spent by another
    /// request since it was read or issued (in the same batch, or one that committed meanwhile),
    /// deleted (its issuer's account with it) or changed, it fails the transaction
    /// (`EventLog.guardFailed`): one token, one request, on the token as it is. A batch's spends
    /// are one statement (a statement per request was 22 µs of PostgreSQL per mate request).
    static func spending(hash: Data, as presented: PresentedDropToken, withEvent eventID: UUID) -> GuardedRow {
        GuardedRow(spendingTable, appended: eventID, values: [hash, presented.issuedBy, presented.expiresAt])
    }

    /// Every token of the batch whose append wrote must be spent here, each by one request: two
    /// requests of a batch presenting one token find one row to update between them.
    private static let spendingTable = GuardedTable(
        sql: """
            WITH presented AS (
                SELECT r.token_hash, r.user_id, r.expires_at
                FROM unnest($1::uuid[], $2::bytea[], $3::uuid[], $4::timestamptz[]) AS r(appended, token_hash, user_id, expires_at)
                WHERE \(GuardedTable.rowAppendedHere)
            ),
            spent AS (
                UPDATE drop_tokens d SET used_at = now()
                FROM presented p
                WHERE d.token_hash = p.token_hash AND d.user_id = p.user_id AND d.expires_at = p.expires_at AND d.used_at IS NULL
                RETURNING 1
            )
            SELECT CASE WHEN (SELECT count(*) FROM spent) = (SELECT count(*) FROM presented) THEN true
                        ELSE \(EventLog.guardFailed("drop token spent by a concurrent request, changed or gone")) END
            """,
        columns: 3
    )

    /// Forgets every token `user` handed out (their account is being deleted).
    static func deleteAll(of user: UUID, on connection: Connection) throws {
        try connection.execute("DELETE FROM drop_tokens WHERE user_id = $1", [user])
    }

    /// Forgets tokens that expired a while ago.
    static func purgeExpired(on connection: Connection) throws -> Int {
        try connection.execute("DELETE FROM drop_tokens WHERE expires_at < now() - interval '1 hour'").affectedRows
    }
}
