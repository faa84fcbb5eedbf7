-- Chat between mates (DESIGN.md, "Chat between mates"): every message's text, edits and photo id
-- enter the log sealed under a key of that one message. The key lives here, itself sealed
-- (AES-GCM) under the sender's data key. Unsending destroys the message's key (sealed_key becomes
-- NULL) in the same transaction as its `message_unsent` event; deleting an account destroys every
-- key of its messages with the account's own. The row stays as a tombstone (ids and times only).
CREATE TABLE message_keys (
    message_id  uuid        PRIMARY KEY,
    sender      uuid        NOT NULL,
    -- nonce (12) + sealed 32-byte key + tag (16)
    sealed_key  bytea       NULL CHECK (octet_length(sealed_key) = 60),
    created_at  timestamptz NOT NULL DEFAULT now(),
    erased_at   timestamptz NULL,
    CHECK ((sealed_key IS NULL) = (erased_at IS NOT NULL))
);
-- A deleted account's message keys are found by their sender.
CREATE INDEX message_keys_by_sender ON message_keys (sender) WHERE sealed_key IS NOT NULL;
