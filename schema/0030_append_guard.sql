-- A guarded write (group commit's side writes, see GroupCommit) that finds its row taken by
-- another transaction since the command read it (a drop token spent twice at once) must not
-- let its append commit without it. It calls this function, which fails the transaction with a
-- serialization failure: the appends of the batch then run alone, and the command whose write
-- could not hold runs again on fresh state, where it is refused.
CREATE FUNCTION append_guard_failed(reason text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'serialization_failure', MESSAGE = reason;
END
$$;
