-- Safety (API.md "Safety: blocks and reports"): the `safety` projector's read models, and a
-- suspended account's profile flag. The facts themselves are events: blocks on the pair stream,
-- reports and suspensions on the user stream. (Default privileges of 0006 give the runtime
-- role its ordinary rights on these tables.)

INSERT INTO projector_checkpoints (projector, transaction_id, position, updated_at) VALUES ('safety', '0', 0, now());

-- Whom each user blocked. The card query reads it: a blocker's card is 404 to the blocked.
CREATE TABLE blocks (
    blocker    uuid        NOT NULL,
    blocked    uuid        NOT NULL,
    blocked_at timestamptz NOT NULL,
    PRIMARY KEY (blocker, blocked)
);
CREATE INDEX blocks_list ON blocks (blocker, blocked_at DESC, blocked);
CREATE INDEX blocks_blocked ON blocks (blocked);

-- Reports for the operators' review, newest first per status.
CREATE TABLE reports (
    report_id   uuid        PRIMARY KEY,
    reporter    uuid        NOT NULL,
    reported    uuid        NOT NULL,
    reason      text        NOT NULL,
    walk_id     uuid,
    note        text,
    status      text        NOT NULL CHECK (status IN ('open', 'resolved')),
    created_at  timestamptz NOT NULL,
    resolved_at timestamptz
);
CREATE INDEX reports_review ON reports (status, created_at DESC, report_id DESC);
CREATE INDEX reports_reporter ON reports (reporter);
CREATE INDEX reports_reported ON reports (reported);

-- A suspended user's card is 404 to everyone.
ALTER TABLE profiles ADD COLUMN suspended boolean NOT NULL DEFAULT false;

-- Suspended accounts, beside the sessions (outside the log, like them): a sign-in checks it in
-- the transaction that would open the session. The suspension itself is a `user_suspended` event.
CREATE TABLE account_suspensions (
    user_id      uuid        PRIMARY KEY,
    suspended_at timestamptz NOT NULL DEFAULT now()
);
