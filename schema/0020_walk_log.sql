-- Walk log (API.md "Walk log", DESIGN.md "Walk log").

-- The routes, outside the log: each row holds the points of one walk log sealed (AES-256-GCM)
-- under a key of that log, and that key sealed under its owner's data key. Deleting the log
-- deletes the row (key and points together) in the transaction of its `walk_log_deleted`;
-- deleting the account deletes the owner's rows in that of `user_deleted`, beside the
-- destruction of the owner's data key. The event carries only figures and the route's digest.
CREATE TABLE walk_routes (
    walk_log_id uuid        PRIMARY KEY,
    owner       uuid        NOT NULL,
    -- The log's own key, sealed under the owner's data key, bound to the walk log id.
    sealed_key  bytea       NOT NULL CHECK (octet_length(sealed_key) BETWEEN 1 AND 128),
    -- The cleaned points (24 bytes each), sealed under the log's key, bound to the walk log id.
    route       bytea       NOT NULL CHECK (octet_length(route) BETWEEN 1 AND 524288),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX walk_routes_by_owner ON walk_routes (owner);
-- Sealed bytes do not compress.
ALTER TABLE walk_routes ALTER COLUMN route SET STORAGE EXTERNAL;
-- A route never changes: inserted, read, deleted.
REVOKE ALL ON walk_routes FROM PUBLIC;
REVOKE UPDATE, TRUNCATE, REFERENCES, TRIGGER ON walk_routes FROM sniffmeet_runtime;
GRANT SELECT, INSERT, DELETE ON walk_routes TO sniffmeet_runtime;

-- Each user's privacy zones (0 to 3), sealed under their data key: the places themselves are
-- personal data, and so is each zone's fixed random offset. One row per user with zones;
-- deleted with the account.
CREATE TABLE privacy_zones (
    user_id    uuid        PRIMARY KEY,
    sealed     bytea       NOT NULL CHECK (octet_length(sealed) BETWEEN 1 AND 4096),
    updated_at timestamptz NOT NULL DEFAULT now()
);
REVOKE ALL ON privacy_zones FROM PUBLIC;

-- The `walk_logs` read model: one row per live walk log, with its figures. Weekly and monthly
-- figures are summed from these rows at query time in the time zone the request names (a
-- stored per-week total would fix one zone's week boundaries).
INSERT INTO projector_checkpoints (projector, transaction_id, position, updated_at) VALUES ('walk_logs', '0', 0, now());
CREATE TABLE walk_logs (
    walk_log_id     uuid        PRIMARY KEY,
    owner           uuid        NOT NULL,
    walk_id         uuid,
    started_at      timestamptz NOT NULL,
    ended_at        timestamptz NOT NULL,
    elapsed_seconds integer     NOT NULL,
    moving_seconds  integer     NOT NULL,
    distance_m      float8      NOT NULL,
    visibility      text        NOT NULL CHECK (visibility IN ('mates', 'private')),
    created_at      timestamptz NOT NULL
);
CREATE INDEX walk_logs_list ON walk_logs (owner, created_at DESC, walk_log_id DESC);
CREATE INDEX walk_logs_stats ON walk_logs (owner, started_at);
CREATE INDEX walk_logs_walk ON walk_logs (walk_id);
