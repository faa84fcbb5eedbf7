-- A report may name a chat message (API.md "Safety: blocks and reports", `message_id`): the
-- `safety` projector keeps it, so that operators see the message's text while it is still
-- readable (the `chats` read model drops the text of an unsent or erased message).
ALTER TABLE reports ADD COLUMN message_id uuid;
