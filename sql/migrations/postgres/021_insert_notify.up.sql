-- Inserts into jobs notify the dispatchers themselves (the insert queries
-- end with jobs_inserted_notify), so the insert trigger of migration 004
-- goes. A one-shot process, such as jobctl submit, opens a new server
-- process, and the trigger loaded PL/pgSQL into each one: about a third of
-- a submit's time on the server. Updates keep their trigger: the nodes
-- that write them hold their connections.
DROP TRIGGER jobs_notify_insert ON jobs;
