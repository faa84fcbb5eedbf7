-- What a chat send costs the database, beyond its event: its message key, its row in
-- `chat_messages` and both sides' `chat_conversations` rows. A text message in a going
-- conversation wrote 13 index entries there; now 6.
--
-- `chat_conversations`: every send moves `updated_at`, which the list index held, so no update
-- could be HOT (two new index entries for each of three indexes per send, and dead tuples for
-- autovacuum). Without that index an update changes no indexed column and stays on its page
-- (fillfactor leaves it the room). The list of one user's conversations reads them by the
-- primary key's `user_id` prefix and sorts the few it finds (a user has as many conversations
-- as mates ever had).
DROP INDEX chat_conversations_list;
ALTER TABLE chat_conversations SET (fillfactor = 80);

-- `chat_messages`: the sender and the addressee are the pair's `lo` and `hi`, so the two
-- indexes by sender and by addressee give way to one by `hi` (the unique (lo, hi, seq) index
-- already finds a user as `lo`): one index entry fewer per message.
DROP INDEX chat_messages_by_to;
DROP INDEX chat_messages_by_from;
CREATE INDEX chat_messages_by_hi ON chat_messages (hi);
