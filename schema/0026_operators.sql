-- Operator accounts (API.md "Operator console"): the people who act on reports sign in to the
-- console with a name and password of their own. Outside the log, like sessions: accounts,
-- links, sessions and tokens are credentials, not facts; what an operator does is an event
-- naming them. Every secret is kept only as its SHA-256 (passwords as scrypt).
CREATE TABLE operators (
    name          text        PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9_-]{0,31}$'),
    -- scrypt$<log2 N>$<r>$<p>$<salt, base64>$<key, base64>; NULL until set through the link.
    password_hash text        NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- One-time links that set a password: 24 hours, single use (setting the password deletes it).
CREATE TABLE operator_links (
    link_hash  bytea       PRIMARY KEY CHECK (octet_length(link_hash) = 32),
    name       text        NOT NULL REFERENCES operators ON DELETE CASCADE,
    expires_at timestamptz NOT NULL
);
CREATE INDEX operator_links_by_name ON operator_links (name);

-- Console sessions: in the database so that every `serve` process accepts them; 12 hours;
-- removing the operator ends them (cascade). The CSRF token of the session's forms is random,
-- kept beside it.
CREATE TABLE console_sessions (
    token_hash bytea       PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    name       text        NOT NULL REFERENCES operators ON DELETE CASCADE,
    csrf_token text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_by_name ON console_sessions (name);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);

-- API tokens for the JSON routes under /v1/admin (`sniffmeet operators token NAME`).
CREATE TABLE operator_tokens (
    token_hash bytea       PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    name       text        NOT NULL REFERENCES operators ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operator_tokens_by_name ON operator_tokens (name);

-- The server reads operators and sets a password through a link, opens and ends sessions; only
-- the command line (the owner) adds and removes operators and issues API tokens. 0006's default
-- privileges granted the runtime everything on these tables: take back what it does not need.
REVOKE ALL ON operators, operator_links, console_sessions, operator_tokens FROM PUBLIC;
REVOKE ALL ON operators, operator_links, console_sessions, operator_tokens FROM sniffmeet_runtime;
GRANT SELECT ON operators TO sniffmeet_runtime;
GRANT UPDATE (password_hash) ON operators TO sniffmeet_runtime;
GRANT SELECT, DELETE ON operator_links TO sniffmeet_runtime;
GRANT SELECT, INSERT, DELETE ON console_sessions TO sniffmeet_runtime;
GRANT SELECT ON operator_tokens TO sniffmeet_runtime;
