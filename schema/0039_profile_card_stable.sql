-- profile_card() (schema 0008) was declared IMMUTABLE, but to_json() is only STABLE, so
-- PostgreSQL refused to inline it: every card the profiles projector rendered went through the
-- SQL-function executor, which parses and plans the body anew for each statement
-- (fmgr_sql and stringToNode, 3.4 % of PostgreSQL's CPU under a burst of sign-ups). Declared
-- STABLE, as it is, the planner inlines its expression into the projector's statements.
ALTER FUNCTION profile_card(uuid, text, text, int, text, bool, text, text[], text) STABLE;
