import EventLog
import Foundation
import PersonalData
import Postgres
import Projections

/// The delivery side of `push_outbox` (schema 0014): claiming due rows (`FOR UPDATE SKIP
/// LOCKED`, then a lease, so several `serve` processes share the work and a crashed one's rows
/// are sent by another), what each needs to go out, and recording what came of it.
enum PushOutbox {
    /// A claimed row: the push, or why there is nothing to send.
    enum Claimed {
        case send(OutgoingPush, deviceMAC: Data)
        /// The session signed out or dropped its device, or the entry left the inbox
        /// (dismissed, emptied, a deleted account): nothing to send.
        case nothing(pushID: UUID, reason: String)
    }

    /// Every step stays an index lookup per claimed row, whatever the statistics say: the ids as
    /// an array (`= ANY`), the entry and the session LATERAL with LIMIT 1. As plain joins the
    /// planner hashed sequential scans of the outbox and the whole inbox on claims (23 ms of 30 at
    /// 22,000 entries in `bench push`, and growing with the tables).
    static let claimSQL = """
        WITH claimed AS (
            UPDATE push_outbox o SET claimed_until = now() + make_interval(secs => $2), attempts = o.attempts + 1
            WHERE o.push_id = ANY(ARRAY(
                SELECT push_id FROM push_outbox
                WHERE state IN ('pending', 'retrying') AND next_attempt_at <= now()
                  AND (claimed_until IS NULL OR claimed_until < now())
                ORDER BY next_attempt_at
                LIMIT $1
                FOR UPDATE SKIP LOCKED))
            RETURNING o.*)
        SELECT c.push_id, c.session_id, c.expires_at, c.entry_at, c.attempts,
               encode(s.device_token_mac, 'hex'), encode(s.device_token_sealed, 'hex'), s.locale, n.notification_id IS NOT NULL,
               \(NotificationRow.columns),
               m.from_user, m.text, m.photo_id IS NOT NULL, m.sent_at, m.unsent, m.log_transaction_id, m.log_position, m.dog,
               v.viewing IS NOT NULL, c.notification_id
        FROM claimed c
        LEFT JOIN LATERAL (
            SELECT * FROM notifications n WHERE n.notification_id = c.notification_id AND n.user_id = c.user_id LIMIT 1) n ON true
        LEFT JOIN LATERAL (SELECT * FROM sessions s WHERE s.session_id = c.session_id LIMIT 1) s ON true
        LEFT JOIN LATERAL (
            SELECT m.*, coalesce((p.card::jsonb)->>'dog_name', '') AS dog FROM chat_messages m
            LEFT JOIN profiles p ON p.user_id = m.from_user
            WHERE m.message_id = c.notification_id AND m.to_user = c.user_id LIMIT 1) m ON true
        LEFT JOIN LATERAL (
            SELECT 1 AS viewing FROM chat_viewing v
            WHERE v.session_id = c.session_id AND v.mate_id = m.from_user AND v.until > now() LIMIT 1) v ON true
        """

    /// Claims up to `limit` due rows for `lease` seconds.
    static func claim(limit: Int, lease: TimeInterval, seal: DeviceTokenSeal, on connection: Connection) throws -> [Claimed] {
        // One round trip: a pipeline up to its sync point is one transaction.
        let rows = try connection.pipeline([relaxed, .init(claimSQL, [limit, lease], prepared: true)])[1].rows
        return try rows.map { row in
            let pushID = try row.uuid(0)
            // A chat message (its row names the sender): not if unsent meanwhile, not to a device
            // whose live stream shows the conversation.
            let chatColumn = 9 + 13
            var chatEntry: NotificationRow?
            if !(try row.bool(8)), !row.isNull(chatColumn) {
                if try row.bool(chatColumn + 4) { return .nothing(pushID: pushID, reason: "message unsent") }
                if try row.bool(chatColumn + 8) { return .nothing(pushID: pushID, reason: "conversation on screen") }
                let text = row.optionalString(chatColumn + 1)
                chatEntry = NotificationRow(
                    notificationID: try row.uuid(chatColumn + 9),
                    category: "chat_message",
                    fromUser: try row.uuid(chatColumn),
                    fromDogName: row.optionalString(chatColumn + 7) ?? "",
                    requestID: nil,
                    walkID: nil,
                    message: text ?? "📷",
                    latitude: nil,
                    longitude: nil,
                    placeName: nil,
                    createdAt: try row.date(chatColumn + 3),
                    position: LogPosition(transactionID: try row.uint64(chatColumn + 5), position: try row.int64(chatColumn + 6))
                )
            }
            guard try row.bool(8) || chatEntry != nil else { return .nothing(pushID: pushID, reason: "entry gone") }
            guard let macHex = row.optionalString(5), let sealedHex = row.optionalString(6), let mac = Hex.bytes(macHex),
                let sealed = Hex.bytes(sealedHex)
            else { return .nothing(pushID: pushID, reason: "no device") }
            // A row that cannot be read must not stall the outbox: it is dropped with the reason.
            guard let token = try? seal.open(mac: Data(mac), sealed: Data(sealed)) else {
                return .nothing(pushID: pushID, reason: "device token unreadable")
            }
            guard let entry = try chatEntry ?? (try? NotificationRow(row, from: 9)) else {
                return .nothing(pushID: pushID, reason: "entry unreadable")
            }
            let push = OutgoingPush(
                pushID: pushID,
                sessionID: try row.uuid(1),
                deviceToken: token,
                locale: row.optionalString(7) ?? "ko",
                entry: entry,
                expiresAt: try row.optionalDate(2),
                entryAt: try row.date(3),
                attempts: try row.int(4)
            )
            return .send(push, deviceMAC: Data(mac))
        }
    }

    /// What becomes of one claimed row.
    struct Result {
        var pushID: UUID
        /// `delivered`, `retrying`, `failed` or `dropped`.
        var state: String
        var nextAttempt: Date?
        var error: String?
    }

    /// Records `results` and drops the dead devices (only while the session still holds that token).
    static func record(_ results: [Result], deadDevices: [(session: UUID, mac: Data)], on connection: Connection) throws {
        try connection.pipeline([relaxed] + outcomeStatements(results, deadDevices: deadDevices))
    }

    /// Settings for a claim's or a record's transaction.
    ///
    /// They commit without waiting for the WAL flush: what a crash of PostgreSQL can lose is a
    /// claim or an outcome of the last moments, whose pushes then go again (delivery is at least
    /// once anyway), never an inbox entry or an event. And they read the outbox only through its
    /// indexes, in order, stopping at the batch: while a backlog builds, the statistics lag
    /// (autovacuum analyzes up to a minute later), and `bench push` caught the planner reading
    /// and sorting every due row, or hashing the whole outbox, for each claim of 200.
    private static let relaxed = Connection.Statement(
        """
        SELECT set_config('synchronous_commit', 'off', true), set_config('enable_seqscan', 'off', true),
               set_config('enable_bitmapscan', 'off', true)
        """,
        prepared: true
    )

    private static func outcomeStatements(_ results: [Result], deadDevices: [(session: UUID, mac: Data)]) -> [Connection.Statement] {
        var statements: [Connection.Statement] = []
        // `= ANY($1)` beside the join gives the planner an index condition: joined to unnest
        // alone, it sometimes hashed a sequential scan of the whole outbox for 16 rows.
        if !results.isEmpty {
            statements.append(
                .init(
                    """
                    UPDATE push_outbox o SET state = x.state, next_attempt_at = coalesce(x.next, o.next_attempt_at),
                        last_error = x.error, claimed_until = NULL,
                        finished_at = CASE WHEN x.state IN ('delivered', 'failed', 'dropped') THEN now() END
                    FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[]) AS x(id, state, next, error)
                    WHERE o.push_id = x.id AND o.push_id = ANY($1::uuid[])
                    """,
                    [results.map(\.pushID), results.map(\.state), results.map(\.nextAttempt), results.map(\.error)],
                    prepared: true
                )
            )
        }
        if !deadDevices.isEmpty {
            statements.append(
                .init(
                    """
                    UPDATE sessions s SET device_token_mac = NULL, device_token_sealed = NULL
                    FROM unnest($1::uuid[], $2::text[]) AS d(session_id, mac)
                    WHERE s.session_id = d.session_id AND s.session_id = ANY($1::uuid[]) AND s.device_token_mac = decode(d.mac, 'hex')
                    """,
                    [deadDevices.map(\.session), deadDevices.map { $0.mac.map { String(format: "%02x", $0) }.joined() }]
                )
            )
        }
        return statements
    }

    /// Rows finished more than a day ago go.
    static func purge(on connection: Connection) throws {
        try connection.execute("DELETE FROM push_outbox WHERE finished_at < now() - interval '1 day'")
    }

    /// How many rows are in each state, and the most common reasons of failures in the last day.
    static func summary(on connection: Connection) throws -> PushSummary {
        var summary = PushSummary()
        for row in try connection.execute("SELECT state, count(*) FROM push_outbox GROUP BY state").rows {
            summary.counts[try row.string(0)] = try row.int(1)
        }
        summary.oldestWaitingSeconds =
            try connection.execute(
                "SELECT extract(epoch FROM now() - min(entry_at))::float8 FROM push_outbox WHERE state IN ('pending', 'retrying')"
            ).first.flatMap { try $0.optionalDouble(0) } ?? 0
        summary.failures = try connection.execute(
            """
            SELECT last_error, count(*) FROM push_outbox
            WHERE state IN ('failed', 'retrying') AND last_error IS NOT NULL AND coalesce(finished_at, now()) > now() - interval '1 day'
            GROUP BY last_error ORDER BY count(*) DESC LIMIT 20
            """
        ).rows.map { (try $0.string(0), try $0.int(1)) }
        return summary
    }
}

/// `GET /v1/admin/push`: the outbox by state.
public struct PushSummary: Sendable {
    /// Rows by state (`pending`, `retrying`, `delivered`, `failed`, `dropped`).
    public var counts: [String: Int] = [:]
    /// Age of the oldest push still waiting to go out.
    public var oldestWaitingSeconds: Double = 0
    /// The most common reasons of failures and retries in the last day.
    public var failures: [(reason: String, count: Int)] = []

    /// The outbox as it stands.
    public static func read(on connection: Connection) throws -> PushSummary { try PushOutbox.summary(on: connection) }
}
