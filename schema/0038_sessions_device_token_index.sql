-- Most sessions have no push token, yet the unique constraint's index held an entry for each
-- NULL: every sign-up and sign-in inserted one (a btree insert and its WAL record) that no
-- query can find. A partial unique index holds only the sessions with a token; the lookups
-- (`device_token_mac = $1`) imply its predicate and still use it.
ALTER TABLE sessions DROP CONSTRAINT sessions_device_token_mac_key;
CREATE UNIQUE INDEX sessions_device_token_mac ON sessions (device_token_mac) WHERE device_token_mac IS NOT NULL;
