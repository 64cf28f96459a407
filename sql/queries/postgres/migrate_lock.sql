-- Session-level advisory lock, keyed by schema so separate schemas of one
-- database migrate independently. Held on one dedicated connection. Returns
-- 1 once the lock is held.
SELECT 1 FROM (SELECT pg_advisory_lock(hashtext('jobctl migrate ' || COALESCE(current_schema(), '')))) AS locked
