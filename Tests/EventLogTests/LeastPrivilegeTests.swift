import EventLog
import Foundation
import Postgres
import PostgresTesting
import XCTest

/// The runtime login (`sniffmeet serve`'s) may read and append to the log and nothing else
/// there, yet do all the ordinary work on every other table.
final class LeastPrivilegeTests: XCTestCase {
    var logins: TestDatabase.Logins!
    var pool: ConnectionPool!

    override func setUp() async throws {
        logins = try TestDatabase.createLogins("privilege")
        pool = ConnectionPool(connectionString: logins.runtime, maxConnections: 4)
    }

    override func tearDown() async throws {
        await pool?.close()
    }

    func testTheRuntimeRoleAppendsAndReadsButCannotChangeTheLog() async throws {
        let log = EventLog(pool: pool)
        let data = Data(#"{"n": 1}"#.utf8)
        // Both append paths: one event on one stream, and several streams with a condition
        // (advisory locks, pipelined statements).
        let commandID = UUID()
        _ = try await log.append(
            commandID: commandID,
            expectations: ["a": .noStream],
            events: [NewEvent(stream: "a", type: "thing_happened", data: data)]
        )
        let second = try await log.append(
            commandID: UUID(),
            expectations: ["a": .exactly(1), "b": .noStream, "c": .any],
            events: [
                NewEvent(stream: "a", type: "thing_happened", data: data),
                NewEvent(stream: "b", type: "thing_happened", data: data),
            ]
        )
        XCTAssertFalse(second.replayed)
        // A retried command finds its events (idempotency needs only SELECT).
        let retried = try await log.append(
            commandID: commandID,
            expectations: ["a": .noStream],
            events: [NewEvent(stream: "a", type: "thing_happened", data: data)]
        )
        XCTAssertTrue(retried.replayed)
        let stream = try await log.readStream("a")
        XCTAssertEqual(stream.map(\.version), [1, 2])

        let refused = [
            "UPDATE events SET event_type = 'forged'",
            "DELETE FROM events",
            "TRUNCATE events",
            "ALTER TABLE events DISABLE TRIGGER ALL",
            "ALTER TABLE events DISABLE TRIGGER events_append_only",
            "DROP TRIGGER events_append_only ON events",
            "SET session_replication_role = replica",
            "CREATE TRIGGER sneaky BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION reject_log_change()",
            "ALTER TABLE events OWNER TO sniffmeet_app",
            "SELECT nextval(pg_get_serial_sequence('events', 'position'))",
            "INSERT INTO schema_migrations (version, name, checksum) VALUES (999, 'x', 'x')",
            "DELETE FROM schema_migrations",
            "CREATE TABLE mine (x int)",
        ]
        for statement in refused {
            do {
                try await pool.withConnection { connection in _ = try connection.execute(statement) }
                XCTFail("the runtime role must not run: \(statement)")
            } catch let error as PostgresError {
                XCTAssertEqual(error.sqlState, "42501", "\(statement): \(error)")
            }
        }

        let count = try await pool.withConnection { try $0.execute("SELECT count(*) FROM events").first!.int(0) }
        XCTAssertEqual(count, 3)
        let superuser = try await pool.withConnection {
            try $0.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").first!.bool(0)
        }
        XCTAssertFalse(superuser)
        let events = try await log.readStream("a")
        XCTAssertEqual(events.map(\.type), ["thing_happened", "thing_happened"])
    }

    /// Photos are inserted, read and deleted, never rewritten: the runtime role has no UPDATE
    /// (nor TRUNCATE) on them.
    func testTheRuntimeRoleCannotRewriteAPhoto() async throws {
        let rights = try await pool.withConnection { connection in
            try connection.execute(
                """
                SELECT p.privilege FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p(privilege)
                WHERE has_table_privilege('photos', p.privilege) ORDER BY 1
                """
            ).rows.map { try $0.string(0) }
        }
        XCTAssertEqual(rights, ["DELETE", "INSERT", "SELECT"])
        do {
            try await pool.withConnection { _ = try $0.execute("UPDATE photos SET etag = etag") }
            XCTFail("the runtime role updated photos")
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, "42501", "\(error)")
        }
    }

    /// Chat photos likewise: inserted, read and deleted (with their message or account), never rewritten.
    func testTheRuntimeRoleCannotRewriteAChatPhoto() async throws {
        let rights = try await pool.withConnection { connection in
            try connection.execute(
                """
                SELECT p.privilege FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p(privilege)
                WHERE has_table_privilege('chat_photos', p.privilege) ORDER BY 1
                """
            ).rows.map { try $0.string(0) }
        }
        XCTAssertEqual(rights, ["DELETE", "INSERT", "SELECT"])
    }

    /// Operator accounts: the server reads them and sets a password (nothing else of a row), spends
    /// password links, opens and ends console sessions and reads API tokens; adding or removing
    /// an operator and issuing a token is the owner's (the command line's).
    func testTheRuntimeRoleHasOnlyTheOperatorRightsTheConsoleNeeds() async throws {
        let rights = try await pool.withConnection { connection in
            try connection.execute(
                """
                SELECT t.name || ' ' || p.privilege
                FROM unnest(ARRAY['operators', 'operator_links', 'console_sessions', 'operator_tokens']) AS t(name)
                CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p(privilege)
                WHERE has_table_privilege(t.name, p.privilege) ORDER BY 1
                """
            ).rows.map { try $0.string(0) }
        }
        XCTAssertEqual(
            rights,
            [
                "console_sessions DELETE", "console_sessions INSERT", "console_sessions SELECT", "operator_links DELETE",
                "operator_links SELECT", "operator_tokens SELECT", "operators SELECT",
            ]
        )
        let columns = try await pool.withConnection { connection in
            try connection.execute(
                """
                SELECT c FROM unnest(ARRAY['name', 'password_hash', 'created_at']) AS c
                WHERE has_column_privilege('operators', c, 'UPDATE') ORDER BY 1
                """
            ).rows.map { try $0.string(0) }
        }
        XCTAssertEqual(columns, ["password_hash"])
        for statement in [
            "INSERT INTO operators (name) VALUES ('mallory')", "DELETE FROM operators",
            "INSERT INTO operator_tokens (token_hash, name) VALUES (sha256('x'), 'mallory')",
        ] {
            do {
                try await pool.withConnection { _ = try $0.execute(statement) }
                XCTFail("the runtime role ran: \(statement)")
            } catch let error as PostgresError {
                XCTAssertEqual(error.sqlState, "42501", "\(error)")
            }
        }
    }

    /// Every table but the log, the migrations' record, photos and chat photos (above) and walk
    /// routes (which are inserted, read and deleted, never rewritten, like photos) is the runtime's to
    /// read and write, including tables created later by the owner (new migrations, rebuilds).
    func testTheRuntimeRoleHasOrdinaryRightsOnEveryOtherTable() async throws {
        let owner = ConnectionPool(connectionString: logins.owner, maxConnections: 1)
        try await owner.withConnection { _ = try $0.execute("CREATE TABLE added_later (id int PRIMARY KEY, note text)") }
        await owner.close()
        let missing = try await pool.withConnection { connection in
            try connection.execute(
                """
                SELECT c.relname || ' ' || p.privilege
                FROM pg_class c
                CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']) AS p(privilege)
                WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
                  AND c.relname NOT IN ('events', 'schema_migrations', 'photos', 'walk_routes', 'chat_photos', 'operators',
                                        'operator_links', 'console_sessions', 'operator_tokens')
                  AND NOT has_table_privilege(c.oid, p.privilege)
                ORDER BY 1
                """
            ).rows.map { try $0.string(0) }
        }
        XCTAssertEqual(missing, [])
        let tables = try await pool.withConnection { connection in
            try connection.execute(
                """
                SELECT count(*) FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'
                """
            ).first!.int(0)
        }
        XCTAssertGreaterThan(tables, 8, "read models, checkpoints, tokens and keys were all checked")

        // What the projectors, the gateway and the jobs do, as they do it.
        try await pool.withConnection { connection in
            try connection.transaction { connection in
                try connection.execute("SELECT pg_advisory_xact_lock(42), pg_notify('sniffmeet_test', '')")
                try connection.execute(
                    """
                    UPDATE projector_checkpoints SET transaction_id = '1', position = 1, updated_at = now()
                    WHERE projector = 'walks'
                    """
                )
                let user = UUID()
                try connection.execute("INSERT INTO profiles (user_id, nickname) VALUES ($1, 'mia')", [user])
                try connection.execute("UPDATE profiles SET dog_name = 'Bori' WHERE user_id = $1", [user])
                try connection.execute("INSERT INTO mates (user_id, mate_id, mates_since) VALUES ($1, $1, now())", [user])
                try connection.execute("DELETE FROM mates WHERE user_id = $1", [user])
                try connection.execute("INSERT INTO drop_tokens (token_hash, user_id, expires_at) VALUES ('\\x01', $1, now())", [user])
                try connection.execute("UPDATE drop_tokens SET used_at = now() WHERE user_id = $1", [user])
                try connection.execute("DELETE FROM drop_tokens WHERE expires_at < now() + interval '1 hour'")
                try connection.execute("INSERT INTO added_later (id, note) VALUES (1, 'a')")
                try connection.execute("UPDATE added_later SET note = 'b'")
                try connection.execute("DELETE FROM added_later")
                try connection.execute("SELECT count(*) FROM schema_migrations")
            }
        }
    }
}
