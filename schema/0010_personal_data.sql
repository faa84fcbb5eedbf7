-- Crypto-shredding (DESIGN.md, "Personal data and erasure"): every user's personal fields enter
-- the log only sealed (AES-GCM) under that user's data key. The keys live here, outside the log,
-- each itself sealed under a key derived from the server's master key. Deleting an account
-- destroys the key (sealed_key becomes NULL) in the same transaction as its `user_deleted`
-- event: from then on nothing that user wrote can be read, though the log is never rewritten.
--
-- The row stays as a tombstone (user id and time only): projectors ask it whether a user is
-- erased, and the count of erased rows tells them cheaply whether anything changed.
CREATE TABLE data_keys (
    user_id     uuid        PRIMARY KEY,
    -- nonce (12) + sealed 32-byte key + tag (16)
    sealed_key  bytea       NULL CHECK (octet_length(sealed_key) = 60),
    created_at  timestamptz NOT NULL DEFAULT now(),
    erased_at   timestamptz NULL,
    CHECK ((sealed_key IS NULL) = (erased_at IS NOT NULL))
);
CREATE INDEX data_keys_erased ON data_keys (user_id) WHERE sealed_key IS NULL;

-- A deleted account's rows are found by every column that can name a user.
CREATE INDEX mates_by_mate ON mates (mate_id);
CREATE INDEX notifications_by_sender ON notifications (from_user);
