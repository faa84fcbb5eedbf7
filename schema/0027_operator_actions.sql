-- The audit log (API.md "Operator console"): which operator resolved, suspended or lifted what,
-- and when. A read model of its own projector (`audit`), which starts at the beginning of the
-- log: actions before operator accounts read as operator `admin`.
INSERT INTO projector_checkpoints (projector, transaction_id, position, updated_at) VALUES ('audit', '0', 0, now());

CREATE TABLE operator_actions (
    event_id  uuid        PRIMARY KEY,
    operator  text        NOT NULL,
    action    text        NOT NULL CHECK (action IN ('resolve', 'suspend', 'lift')),
    user_id   uuid        NOT NULL,
    report_id uuid        NULL,
    at        timestamptz NOT NULL
);
-- Newest first, and per user (a user's page lists their suspensions).
CREATE INDEX operator_actions_recent ON operator_actions (at DESC, event_id DESC);
CREATE INDEX operator_actions_by_user ON operator_actions (user_id, at DESC);
