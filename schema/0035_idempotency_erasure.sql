-- A stored answer that shows a chat message (its send, its edits) names that message, so that
-- unsending it deletes the answers with the message's key: an unsent message's text must not
-- stay readable for 24 hours to whoever holds the server secret, nor its request's fingerprint.
ALTER TABLE idempotency_keys ADD COLUMN erase_with uuid;
CREATE INDEX idempotency_keys_by_erase_with ON idempotency_keys (erase_with) WHERE erase_with IS NOT NULL;
