-- The schema of the jobs table this connection works on. Migration 003's
-- trigger sends it as the payload of each job change notification, so a
-- listener hears its own cluster's changes only, not those of another
-- jobctl in another schema of the same database.
SELECT n.nspname
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = CAST('jobs' AS regclass)
