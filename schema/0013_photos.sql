-- Profile photos (DESIGN.md, "Photos"): the re-encoded copies of an upload, outside the log
-- (the log only names the photo id, sealed like the rest of the profile). A photo never
-- changes: a new upload is a new row under a new random id, and the old row is deleted in the
-- same transaction as the event that puts the new id on the card. Deleting an account deletes
-- its rows in the transaction of its `user_deleted`.
CREATE TABLE photos (
    -- 128 random bits: holding the id is what lets anyone fetch the photo.
    photo_id    uuid        PRIMARY KEY,
    owner       uuid        NOT NULL,
    -- Baseline JPEG, at most 1080 px on its longest side, no metadata.
    image       bytea       NOT NULL CHECK (octet_length(image) BETWEEN 1 AND 10485760),
    -- Baseline JPEG, 200 x 200.
    thumbnail   bytea       NOT NULL CHECK (octet_length(thumbnail) BETWEEN 1 AND 1048576),
    -- Strong validator of both copies (they never change): hex of a SHA-256 of the image.
    etag        text        NOT NULL CHECK (etag ~ '^[0-9a-f]{32}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX photos_by_owner ON photos (owner);

-- JPEG does not compress further: store the bytes out of line without trying.
ALTER TABLE photos ALTER COLUMN image SET STORAGE EXTERNAL;
ALTER TABLE photos ALTER COLUMN thumbnail SET STORAGE EXTERNAL;

-- The server inserts, reads and deletes photos; nothing ever rewrites one (0006's default
-- privileges granted UPDATE too).
REVOKE ALL ON photos FROM PUBLIC;
REVOKE UPDATE, TRUNCATE, REFERENCES, TRIGGER ON photos FROM sniffmeet_runtime;
GRANT SELECT, INSERT, DELETE ON photos TO sniffmeet_runtime;
