-- Chat pushes (API.md "Chat between mates"): a message is pushed through push_outbox like an
-- inbox entry (its `notification_id` is the message id), except to a device whose live stream
-- shows that conversation (`GET /v1/me/stream?viewing=`). Each such stream keeps a row here
-- while it is open, so that the delivery of any process sees it.
CREATE TABLE chat_viewing (
    session_id uuid        NOT NULL,
    mate_id    uuid        NOT NULL,
    -- The stream's end at the latest (a crashed process's rows lapse by themselves).
    until      timestamptz NOT NULL,
    PRIMARY KEY (session_id, mate_id)
);
