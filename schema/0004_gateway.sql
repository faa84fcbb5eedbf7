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
-- nil uuid for sign-up (which has no caller yet).
CREATE TABLE idempotency_keys (
    scope         uuid        NOT NULL,
    key           text        NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 200),
    request_hash  text        NOT NULL,
    status        integer     NOT NULL,
    log_position  text        NULL,
    body          text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
