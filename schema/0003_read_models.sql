-- Read models: disposable tables built from the log by the projectors (module Projections).
-- Dropping them and replaying the log gives back exactly the same rows.

-- Where each projector stands in the gap-safe feed. A projector moves its row in the same
-- transaction as its rows, and only from the value it read (compare-and-set), so a crash
-- neither loses nor doubles a row and two owners can never both apply one batch.
-- Rebuild jobs keep their own rows here ("<projector>__rebuild").
CREATE TABLE projector_checkpoints (
    projector      text        PRIMARY KEY,
    transaction_id xid8        NOT NULL,
    position       bigint      NOT NULL,
    updated_at     timestamptz
);

INSERT INTO projector_checkpoints (projector, transaction_id, position, updated_at) VALUES
    ('profiles', '0', 0, now()),
    ('mates', '0', 0, now()),
    ('mate_requests', '0', 0, now()),
    ('walks', '0', 0, now()),
    ('notifications', '0', 0, now());

-- Uniqueness of nicknames is the log's job (nickname streams), not an index's.
CREATE TABLE profiles (
    user_id       uuid PRIMARY KEY,
    nickname      text,
    dog_name      text,
    age           int,
    sex           text,
    neutered      bool,
    size          text,
    keywords      text[],
    profile_image text NULL,
    created_at    timestamptz,
    updated_at    timestamptz
);

-- Two rows per pair, one for each side, so "my mates" is one index range.
CREATE TABLE mates (
    user_id     uuid,
    mate_id     uuid,
    mates_since timestamptz,
    PRIMARY KEY (user_id, mate_id)
);

CREATE TABLE mate_requests (
    request_id uuid PRIMARY KEY,
    from_user  uuid,
    to_user    uuid,
    status     text,   -- pending|accepted|declined|cancelled
    created_at timestamptz,
    updated_at timestamptz
);
CREATE INDEX mate_requests_to_user_created_at_idx ON mate_requests (to_user, created_at);
CREATE INDEX mate_requests_from_user_created_at_idx ON mate_requests (from_user, created_at);

CREATE TABLE walks (
    walk_id     uuid PRIMARY KEY,
    from_user   uuid,
    to_user     uuid,
    message     text,
    latitude    float8,
    longitude   float8,
    place_name  text NULL,
    status      text,  -- pending|accepted|declined|expired|cancelled
    created_at  timestamptz,
    expires_at  timestamptz,
    answered_at timestamptz NULL
);
CREATE INDEX walks_to_user_created_at_idx ON walks (to_user, created_at);
CREATE INDEX walks_from_user_created_at_idx ON walks (from_user, created_at);
-- For the expiry job: pending walks past their deadline.
CREATE INDEX walks_status_expires_at_idx ON walks (status, expires_at);

CREATE TABLE notifications (
    notification_id    uuid PRIMARY KEY,   -- the id of the event that caused it
    user_id            uuid,               -- the recipient
    category           text,               -- mate_requested|mate_accepted|walk_requested|walk_accepted|walk_declined|walk_expired
    from_user          uuid,
    from_dog_name      text,
    request_id         uuid NULL,
    walk_id            uuid NULL,
    message            text NULL,
    latitude           float8 NULL,
    longitude          float8 NULL,
    place_name         text NULL,
    created_at         timestamptz,
    log_transaction_id xid8,               -- the event's feed position: SSE ids and ordering
    log_position       bigint
);
CREATE INDEX notifications_user_id_log_transaction_id_log_position_idx
    ON notifications (user_id, log_transaction_id, log_position);

-- Private to the notifications projector: each user's current dog name, so an inbox entry
-- carries the sender's dog name as of the event without reading another projector's table
-- (which may be at a different checkpoint). Rebuilt together with notifications.
CREATE TABLE notification_senders (
    user_id  uuid PRIMARY KEY,
    dog_name text NOT NULL
);
