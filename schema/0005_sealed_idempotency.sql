-- Idempotent answers can carry secrets (a sign-up's bearer token, a drop token), and 0004 kept
-- them readable. From now on the Idempotency-Key is kept only as its SHA-256 and the answer body
-- only sealed (AES-GCM) under a key derived from the Idempotency-Key itself: the table alone
-- reveals nothing.
--
-- The rows are a cache of answers, not facts: the command ids derived from (caller, key) keep
-- retries from writing twice whatever this table holds, so the old rows (and the plain secrets
-- in them) are dropped rather than converted.
DROP TABLE idempotency_keys;

CREATE TABLE idempotency_keys (
    scope         uuid        NOT NULL,
    key_hash      bytea       NOT NULL CHECK (octet_length(key_hash) = 32),
    request_hash  bytea       NOT NULL CHECK (octet_length(request_hash) = 32),
    status        integer     NOT NULL,
    log_position  text        NULL,
    sealed_body   bytea       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key_hash)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
