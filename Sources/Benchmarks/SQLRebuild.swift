import Foundation
import Postgres
import Projections

/// The read models built by PostgreSQL alone, with one INSERT … SELECT from the log per table:
/// the reference `sniffmeet bench rebuild` measures the projectors against (it is what the
/// database can do without any client in the loop). Gives the same rows as the projectors,
/// which a test checks, so the two measure the same work. Blocking.
public enum SQLRebuild {
    /// Creates fresh copies of every read-model table in `tables` and fills them from the whole
    /// log in one transaction.
    public static func run(into tables: TableSet, on connection: Connection) throws {
        try connection.transaction { connection in
            for table in Projectors.all.flatMap(\.tables) {
                try connection.execute("DROP TABLE IF EXISTS \(tables(table))")
                try ReadModelTables.createCopy(of: table, in: tables, on: connection)
            }
            for statement in statements(tables) { try connection.execute(statement) }
        }
    }

    static func statements(_ t: TableSet) -> [String] {
        [
            """
            INSERT INTO \(t("profiles")) (user_id, nickname, dog_name, age, sex, neutered, size, keywords, profile_image, created_at, updated_at,
                                        card)
            SELECT p.*, \(ProfilesProjector.card("p"))
            FROM (SELECT DISTINCT ON (e.stream_id)
                   (e.data->>'user_id')::uuid, e.data->'profile'->>'nickname', e.data->'profile'->>'dog_name',
                   (e.data->'profile'->>'age')::int, e.data->'profile'->>'sex', (e.data->'profile'->>'neutered')::bool,
                   e.data->'profile'->>'size', ARRAY(SELECT jsonb_array_elements_text(e.data->'profile'->'keywords')),
                   e.data->'profile'->>'profile_image', r.registered_at,
                   coalesce(e.data->>'updated_at', e.data->>'registered_at')::timestamptz
            FROM events e
            JOIN (SELECT stream_id, (data->>'registered_at')::timestamptz AS registered_at FROM events
                  WHERE event_type = 'user_registered') r ON r.stream_id = e.stream_id
            WHERE e.event_type IN ('user_registered', 'profile_updated')
            ORDER BY e.stream_id, e.stream_version DESC)
                AS p(user_id, nickname, dog_name, age, sex, neutered, size, keywords, profile_image, created_at, updated_at)
            """,
            """
            INSERT INTO \(t("mates")) (user_id, mate_id, mates_since)
            SELECT v.user_id, v.mate_id, (last.data->>'at')::timestamptz
            FROM (SELECT DISTINCT ON (stream_id) event_type, data FROM events
                  WHERE event_type IN ('mate_accepted', 'mates_unpaired') ORDER BY stream_id, stream_version DESC) last
            CROSS JOIN LATERAL (VALUES ((last.data->>'from')::uuid, (last.data->>'to')::uuid),
                                       ((last.data->>'to')::uuid, (last.data->>'from')::uuid)) AS v(user_id, mate_id)
            WHERE last.event_type = 'mate_accepted'
            """,
            """
            INSERT INTO \(t("mate_requests")) (request_id, from_user, to_user, status, created_at, updated_at)
            SELECT DISTINCT ON (e.data->>'request_id')
                   (e.data->>'request_id')::uuid, (e.data->>'from')::uuid, (e.data->>'to')::uuid,
                   CASE e.event_type WHEN 'mate_requested' THEN 'pending' WHEN 'mate_accepted' THEN 'accepted'
                                     WHEN 'mate_declined' THEN 'declined' ELSE 'cancelled' END,
                   r.created_at, (e.data->>'at')::timestamptz
            FROM events e
            JOIN (SELECT data->>'request_id' AS request_id, (data->>'at')::timestamptz AS created_at FROM events
                  WHERE event_type = 'mate_requested') r ON r.request_id = e.data->>'request_id'
            WHERE e.event_type IN ('mate_requested', 'mate_accepted', 'mate_declined', 'mate_request_cancelled')
            ORDER BY e.data->>'request_id', e.transaction_id DESC, e.position DESC
            """,
            """
            INSERT INTO \(t("walks")) (walk_id, from_user, to_user, message, latitude, longitude, place_name, status, created_at,
                                       expires_at, answered_at)
            SELECT (r.data->>'walk_id')::uuid, (r.data->>'from')::uuid, (r.data->>'to')::uuid, r.data->>'message',
                   (r.data->>'latitude')::float8, (r.data->>'longitude')::float8, r.data->>'place_name',
                   CASE l.event_type WHEN 'walk_requested' THEN 'pending' WHEN 'walk_accepted' THEN 'accepted'
                                     WHEN 'walk_declined' THEN 'declined' WHEN 'walk_cancelled' THEN 'cancelled' ELSE 'expired' END,
                   (r.data->>'created_at')::timestamptz, (r.data->>'expires_at')::timestamptz,
                   CASE WHEN l.event_type IN ('walk_accepted', 'walk_declined', 'walk_cancelled') THEN (l.data->>'at')::timestamptz END
            FROM events r
            JOIN (SELECT DISTINCT ON (stream_id) stream_id, event_type, data FROM events
                  WHERE stream_id LIKE 'walk-%' ORDER BY stream_id, stream_version DESC) l ON l.stream_id = r.stream_id
            WHERE r.event_type = 'walk_requested'
            """,
            """
            WITH dismissed AS (
                SELECT data->>'notification_id' AS id, data->>'user_id' AS user_id, transaction_id, position
                FROM events WHERE event_type = 'notification_dismissed'),
            made AS (
                SELECT e.event_id, e.event_type, e.stream_id, e.data, e.transaction_id, e.position,
                       (CASE WHEN e.event_type IN ('mate_requested', 'walk_requested') THEN e.data->>'to' ELSE e.data->>'from' END)::uuid AS recipient,
                       (CASE WHEN e.event_type IN ('mate_requested', 'walk_requested') THEN e.data->>'from' ELSE e.data->>'to' END)::uuid AS sender
                FROM events e
                WHERE e.event_type IN ('mate_requested', 'mate_accepted', 'walk_requested', 'walk_accepted', 'walk_declined', 'walk_expired'))
            INSERT INTO \(t("notifications")) (notification_id, user_id, category, from_user, from_dog_name, request_id, walk_id,
                                               message, latitude, longitude, place_name, created_at, log_transaction_id, log_position)
            SELECT m.event_id, m.recipient, m.event_type, m.sender,
                   (SELECT p.data->'profile'->>'dog_name' FROM events p
                     WHERE p.stream_id = 'user-' || m.sender::text AND p.event_type IN ('user_registered', 'profile_updated')
                       AND (p.transaction_id, p.position) < (m.transaction_id, m.position)
                     ORDER BY p.stream_version DESC LIMIT 1),
                   (m.data->>'request_id')::uuid, (m.data->>'walk_id')::uuid, w.data->>'message', (w.data->>'latitude')::float8,
                   (w.data->>'longitude')::float8, w.data->>'place_name',
                   coalesce(m.data->>'at', m.data->>'created_at')::timestamptz, m.transaction_id, m.position
            FROM made m
            LEFT JOIN events w ON m.event_type LIKE 'walk\\_%' AND w.stream_id = m.stream_id AND w.stream_version = 1
            WHERE NOT EXISTS (SELECT 1 FROM dismissed d WHERE d.id = m.event_id::text AND d.user_id = m.recipient::text
                                AND (d.transaction_id, d.position) > (m.transaction_id, m.position))
              AND NOT EXISTS (SELECT 1 FROM events c WHERE c.event_type = 'notifications_cleared'
                                AND c.data->>'user_id' = m.recipient::text
                                AND (c.transaction_id, c.position) > (m.transaction_id, m.position))
            """,
            """
            UPDATE \(t("profiles")) p SET suspended = true
            FROM (SELECT DISTINCT ON (stream_id) event_type, data FROM events
                  WHERE event_type IN ('user_suspended', 'user_unsuspended') ORDER BY stream_id, stream_version DESC) s
            WHERE s.event_type = 'user_suspended' AND p.user_id = (s.data->>'user_id')::uuid
            """,
            """
            INSERT INTO \(t("blocks")) (blocker, blocked, blocked_at)
            SELECT (data->>'by')::uuid, (data->>'blocked')::uuid, (data->>'at')::timestamptz
            FROM (SELECT DISTINCT ON (stream_id, data->>'by') event_type, data FROM events
                  WHERE event_type IN ('user_blocked', 'user_unblocked') ORDER BY stream_id, data->>'by', stream_version DESC) b
            WHERE event_type = 'user_blocked'
            """,
            """
            INSERT INTO \(t("reports")) (report_id, reporter, reported, reason, walk_id, note, status, created_at, resolved_at)
            SELECT (r.data->>'report_id')::uuid, (r.data->>'reporter')::uuid, (r.data->>'reported')::uuid, r.data->>'reason',
                   (r.data->>'walk_id')::uuid, r.data->>'note', CASE WHEN x.data IS NULL THEN 'open' ELSE 'resolved' END,
                   (r.data->>'at')::timestamptz, (x.data->>'at')::timestamptz
            FROM events r
            LEFT JOIN events x ON x.event_type = 'report_resolved' AND x.stream_id = r.stream_id
                               AND x.data->>'report_id' = r.data->>'report_id'
            WHERE r.event_type = 'user_reported'
            """,
            """
            INSERT INTO \(t("operator_actions")) (event_id, operator, action, user_id, report_id, at)
            SELECT event_id, coalesce(data->>'operator', 'admin'),
                   CASE event_type WHEN 'report_resolved' THEN 'resolve' WHEN 'user_suspended' THEN 'suspend' ELSE 'lift' END,
                   coalesce(data->>'reported', data->>'user_id')::uuid, (data->>'report_id')::uuid, (data->>'at')::timestamptz
            FROM events WHERE event_type IN ('report_resolved', 'user_suspended', 'user_unsuspended')
            """,
            """
            INSERT INTO \(t("notification_senders")) (user_id, dog_name)
            SELECT DISTINCT ON (stream_id) (data->>'user_id')::uuid, data->'profile'->>'dog_name' FROM events
            WHERE event_type IN ('user_registered', 'profile_updated') ORDER BY stream_id, stream_version DESC
            """,
        ]
    }
}
