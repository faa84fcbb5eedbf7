-- One row that a process updates when it must know that everything committed before now is on
-- the synchronous standby: a retried command that finds its events already in the log, possibly
-- committed on the primary alone (a COMMIT whose wait for the standby was cancelled or cut by a
-- shutdown), is acknowledged only once this later write of ours has been acknowledged. Its commit
-- waits for the standby to confirm its WAL position, which lies after those events.
CREATE TABLE replication_fence (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    written_at timestamptz NOT NULL
);
INSERT INTO replication_fence (id, written_at) VALUES (true, now());
