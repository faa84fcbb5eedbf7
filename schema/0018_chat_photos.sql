-- Chat photos (API.md, "Chat between mates"): the re-encoded copies of a photo sent in one
-- conversation, kept apart from profile photos because the id alone must not be enough to fetch
-- one: only the two mates of its conversation may. Deleted with the message that carried it
-- (unsend) and with the sender's account, in those commands' transactions.
CREATE TABLE chat_photos (
    photo_id    uuid        PRIMARY KEY,
    owner       uuid        NOT NULL,
    mate        uuid        NOT NULL,
    image       bytea       NOT NULL CHECK (octet_length(image) BETWEEN 1 AND 10485760),
    thumbnail   bytea       NOT NULL CHECK (octet_length(thumbnail) BETWEEN 1 AND 1048576),
    etag        text        NOT NULL CHECK (etag ~ '^[0-9a-f]{32}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_photos_by_owner ON chat_photos (owner);
CREATE INDEX chat_photos_by_mate ON chat_photos (mate);
ALTER TABLE chat_photos ALTER COLUMN image SET STORAGE EXTERNAL;
ALTER TABLE chat_photos ALTER COLUMN thumbnail SET STORAGE EXTERNAL;
REVOKE ALL ON chat_photos FROM PUBLIC;
REVOKE UPDATE, TRUNCATE, REFERENCES, TRIGGER ON chat_photos FROM sniffmeet_runtime;
GRANT SELECT, INSERT, DELETE ON chat_photos TO sniffmeet_runtime;
