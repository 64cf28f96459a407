-- The oldest events naming no job recorded before a time, for EventPurge
-- to delete by id (MySQL takes no LIMIT in a subquery of a DELETE).
SELECT id
FROM events
WHERE job_id IS NULL AND created_at < :before
ORDER BY id
LIMIT :limit
