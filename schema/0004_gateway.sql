-- Gateway state that is not part of the log: bearer tokens and idempotent answers.
-- Neither is a read model: tokens are secrets (never in the log), and stored answers only
-- save a retried request the work; the log's command ids keep retried commands from writing twice.

-- Bearer tokens: 256 random bits handed to the client once; only their SHA-256 is kept.
CREATE TABLE auth_tokens (
    token_hash  bytea       PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    user_id     uuid        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX auth_tokens_by_user ON auth_tokens (user_id);

-- The first answer to each (caller, Idempotency-Key). `scope` is the caller's user id, or the
-- nil uuid for sign-up (which has no caller yet). Some answers carry secrets (a sign-up's bearer
-- token, a drop token), so the key is kept only as its SHA-256 and the answer body only sealed
-- (AES-GCM) under a key derived from the Idempotency-Key itself: the table alone reveals nothing.
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
