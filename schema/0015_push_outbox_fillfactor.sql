-- A claim only moves `claimed_until` and `attempts`, which no index reads: with room left on the
-- row's page PostgreSQL updates it in place (a HOT update) instead of adding an entry to each of
-- the outbox's five indexes. `perf` put 40 % of PostgreSQL's time in `bench push` in those index
-- inserts. Pages written from now on keep half free; older ones are not rewritten.
ALTER TABLE push_outbox SET (fillfactor = 50);
