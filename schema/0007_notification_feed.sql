-- The live inbox streams of a process are served by one reader (NotificationFeed) that asks for
-- the entries committed since its last read, for every listening user at once. By feed position
-- first, that is a short range scan of what is new; the (user_id, …) index would probe once per
-- listening user instead.
CREATE INDEX notifications_log_transaction_id_log_position_idx
    ON notifications (log_transaction_id, log_position);
