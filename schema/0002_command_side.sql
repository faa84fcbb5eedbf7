-- Command-side helpers.

-- Drop tokens are short-lived credentials (5 minutes, single use), not facts about the app:
-- keeping them out of the log means the log never holds a usable secret and expired tokens can
-- simply be deleted. Only the SHA-256 of a token is stored. A mate request that spends one
-- marks it used in the same transaction as the request's events.
CREATE TABLE drop_tokens (
    token_hash bytea       PRIMARY KEY,
    user_id    uuid        NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX drop_tokens_expiry ON drop_tokens (expires_at);

-- Routes name a mate request by its id alone; this finds its pair stream in the log.
CREATE INDEX events_mate_request_id ON events ((data->>'request_id')) WHERE event_type = 'mate_requested';
