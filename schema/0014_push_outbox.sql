-- Push notifications (API.md "Push notifications", DESIGN.md "Push notifications (outbox)"):
-- one row per inbox entry and registered device, written by the notifications projector in the
-- transaction that moves its checkpoint, so each is enqueued exactly once; a rebuild writes none.
-- Only ids and times live here: the alert is made from the inbox entry and the session's sealed
-- device token when it is sent, so a signed-out device, a dismissed entry or a deleted account
-- leaves nothing to send.
CREATE TABLE push_outbox (
    push_id         uuid        PRIMARY KEY,
    notification_id uuid        NOT NULL,
    user_id         uuid        NOT NULL,
    session_id      uuid        NOT NULL,
    -- pending → delivered | retrying → … | failed (APNs refused it, or past the horizon) | dropped
    -- (nothing left to send it to).
    state           text        NOT NULL DEFAULT 'pending'
                                CHECK (state IN ('pending', 'retrying', 'delivered', 'failed', 'dropped')),
    attempts        int         NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    -- A claim by one serve process; past it, another may take the row (at-least-once).
    claimed_until   timestamptz,
    -- When APNs may stop trying (a walk request: when the walk expires).
    expires_at      timestamptz,
    -- When the entry's event was decided: the start of the commit-to-APNs latency.
    entry_at        timestamptz NOT NULL,
    finished_at     timestamptz,
    last_error      text,
    UNIQUE (notification_id, session_id)
);
CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at) WHERE state IN ('pending', 'retrying');
CREATE INDEX push_outbox_user ON push_outbox (user_id);
CREATE INDEX push_outbox_finished ON push_outbox (finished_at) WHERE finished_at IS NOT NULL;
