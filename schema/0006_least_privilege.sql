-- Least privilege: `sniffmeet serve` works as a member of the group role sniffmeet_runtime,
-- which may read and append to the log and nothing else there, while the role running these
-- migrations (the owner) keeps the schema. A bug or an injected statement in the server can
-- then neither rewrite nor empty the log: UPDATE, DELETE and TRUNCATE are not granted, and
-- only the owner or a superuser may disable or drop the append-only trigger or set
-- session_replication_role = replica (which skips triggers).
--
-- Roles belong to the whole cluster, grants to this database. The group role is created here
-- when the owner may create roles; otherwise an administrator creates it (README: "Least
-- privilege"). Logins are never created here: they need passwords, which do not belong in a
-- migration.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sniffmeet_runtime') THEN
        BEGIN
            CREATE ROLE sniffmeet_runtime NOLOGIN;
        EXCEPTION
            WHEN insufficient_privilege THEN
                RAISE EXCEPTION 'role sniffmeet_runtime does not exist and % may not create roles', current_user
                    USING ERRCODE = 'insufficient_privilege',
                          DETAIL = 'An administrator runs: CREATE ROLE sniffmeet_runtime NOLOGIN; '
                                   || 'CREATE ROLE sniffmeet_app LOGIN PASSWORD ''...'' IN ROLE sniffmeet_runtime; '
                                   || 'then migrate again, and serve with sniffmeet_app as DATABASE_URL.';
            WHEN duplicate_object OR unique_violation THEN
                NULL;  -- another database of this cluster created it at the same moment
        END;
    END IF;
END
$$;

-- The point of the role is lost if it holds the owner's rights or a superuser's.
DO $$
DECLARE
    log_owner oid := (SELECT relowner FROM pg_class WHERE oid = 'events'::regclass);
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = 'sniffmeet_runtime')
       OR pg_has_role('sniffmeet_runtime', log_owner, 'MEMBER') THEN
        RAISE EXCEPTION 'sniffmeet_runtime must be neither a superuser nor a member of %, the owner of events',
                        pg_get_userbyid(log_owner)
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END
$$;

-- Identifiers cannot be parameters; the schema name comes from the catalog and is quoted by %I.
DO $$
DECLARE
    here text := current_schema();
BEGIN
    -- PUBLIC usually has USAGE on the public schema already, and on PostgreSQL 14 and older
    -- the owner may not be allowed to grant it there.
    IF NOT has_schema_privilege('sniffmeet_runtime', here, 'USAGE') THEN
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO sniffmeet_runtime', here);
    END IF;
    -- Ordinary rights on everything but the log: read models, checkpoints, tokens, keys.
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO sniffmeet_runtime', here);
    EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %I TO sniffmeet_runtime', here);
    EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %I TO sniffmeet_runtime', here);
    -- Tables, sequences and functions the owner creates later (new migrations, and the fresh
    -- read-model tables of `sniffmeet rebuild`, which run as the owner) get the same rights.
    -- A later migration adding another append-only table revokes UPDATE and DELETE itself.
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO sniffmeet_runtime', here);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT USAGE, SELECT ON SEQUENCES TO sniffmeet_runtime', here);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT EXECUTE ON FUNCTIONS TO sniffmeet_runtime', here);
END
$$;

-- The log: read and append, nothing else (also nothing for PUBLIC, whatever was granted before).
-- Appends need no right on the identity sequence: PostgreSQL draws identity values for an
-- INSERT without checking one.
REVOKE ALL ON events FROM PUBLIC, sniffmeet_runtime;
GRANT SELECT, INSERT ON events TO sniffmeet_runtime;
DO $$
BEGIN
    EXECUTE format('REVOKE ALL ON SEQUENCE %s FROM PUBLIC, sniffmeet_runtime',
                   pg_get_serial_sequence('events', 'position'));
END
$$;

-- The migrations' record is the owner's: the runtime only reads it (`/readyz`).
REVOKE ALL ON schema_migrations FROM sniffmeet_runtime;
GRANT SELECT ON schema_migrations TO sniffmeet_runtime;
