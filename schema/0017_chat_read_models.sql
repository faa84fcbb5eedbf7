-- Chat between mates: the `chats` read model (built by ChatsProjector) and the read markers,
-- which are not facts of the domain and stay out of the log (DESIGN.md, "Chat between mates").

-- Every message of every conversation, by its place (`seq`). An unsent message keeps its row
-- (its place, sender and time) with text and photo gone.
CREATE TABLE chat_messages (
    message_id uuid        PRIMARY KEY,
    lo         uuid        NOT NULL,
    hi         uuid        NOT NULL,
    seq        integer     NOT NULL,
    from_user  uuid        NOT NULL,
    to_user    uuid        NOT NULL,
    text       text        NULL,
    photo_id   uuid        NULL,
    sent_at    timestamptz NOT NULL,
    edited_at  timestamptz NULL,
    unsent     boolean     NOT NULL DEFAULT false,
    -- The feed position of its last change (sent, edited, unsent): the live stream's order and
    -- its Last-Event-ID.
    log_transaction_id xid8   NOT NULL,
    log_position       bigint NOT NULL
);
CREATE INDEX chat_messages_by_change ON chat_messages (log_transaction_id, log_position);
CREATE UNIQUE INDEX chat_messages_by_seq ON chat_messages (lo, hi, seq);
CREATE INDEX chat_messages_by_to ON chat_messages (to_user);
CREATE INDEX chat_messages_by_from ON chat_messages (from_user);
CREATE INDEX chat_messages_by_photo ON chat_messages (photo_id) WHERE photo_id IS NOT NULL;

-- One row per user and conversation: where its newest message stands (for the list's order).
CREATE TABLE chat_conversations (
    user_id         uuid        NOT NULL,
    mate_id         uuid        NOT NULL,
    last_seq        integer     NOT NULL,
    last_message_id uuid        NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (user_id, mate_id)
);
CREATE INDEX chat_conversations_list ON chat_conversations (user_id, updated_at DESC, mate_id);
CREATE INDEX chat_conversations_by_mate ON chat_conversations (mate_id);

INSERT INTO projector_checkpoints (projector, transaction_id, position, updated_at) VALUES ('chats', '0', 0, now());

-- Read markers: how far each reader has read each conversation. Only ever moved forward.
CREATE TABLE chat_read_markers (
    user_id    uuid        NOT NULL,
    mate_id    uuid        NOT NULL,
    up_to      integer     NOT NULL CHECK (up_to >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, mate_id)
);
CREATE INDEX chat_read_markers_by_mate ON chat_read_markers (mate_id);
