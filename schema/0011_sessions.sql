-- Sessions (DESIGN.md, "Sessions"): one per device, each its own bearer token (kept only as its
-- SHA-256), listed and revocable, with the device's push token and locale. Replaces
-- auth_tokens, whose tokens carry over as sessions.
CREATE TABLE sessions (
    session_id          uuid        PRIMARY KEY,
    token_hash          bytea       NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    user_id             uuid        NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    -- Moved at most about once a minute (the API shows it to the minute).
    last_seen_at        timestamptz NOT NULL DEFAULT now(),
    -- The APNs device token: sealed (AES-GCM under a key derived from the master key), and
    -- found by its HMAC, so that a token moving to another session is one statement.
    device_token_mac    bytea       NULL UNIQUE CHECK (octet_length(device_token_mac) = 32),
    device_token_sealed bytea       NULL,
    locale              text        NOT NULL DEFAULT 'ko' CHECK (locale IN ('ko', 'en')),
    CHECK ((device_token_mac IS NULL) = (device_token_sealed IS NULL))
);
CREATE INDEX sessions_by_user ON sessions (user_id, created_at);

INSERT INTO sessions (session_id, token_hash, user_id, created_at, last_seen_at)
SELECT gen_random_uuid(), token_hash, user_id, created_at, created_at FROM auth_tokens;
DROP TABLE auth_tokens;

-- One-time codes that sign the same account in on another phone: only their SHA-256 is kept;
-- 10 minutes, single use (redeeming deletes the row).
CREATE TABLE transfer_codes (
    code_hash   bytea       PRIMARY KEY CHECK (octet_length(code_hash) = 32),
    user_id     uuid        NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX transfer_codes_by_user ON transfer_codes (user_id);
CREATE INDEX transfer_codes_by_expiry ON transfer_codes (expires_at);
