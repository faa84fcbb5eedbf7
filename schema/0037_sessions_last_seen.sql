-- A session's `last_seen_at` moves at most about once a minute, on the first request after a
-- pause: at every sign-in after a while, so once per session for most of them. The column is
-- indexed nowhere, so its update can stay on its page (HOT: no new entry in any of the four
-- indexes), but only if the page has room; full pages made every such update write four index
-- entries (47 µs of PostgreSQL's time per update under `scripts/bench-http`'s accepts, the
-- costliest statement there). Pages written from now on keep a fifth free.
ALTER TABLE sessions SET (fillfactor = 80);
