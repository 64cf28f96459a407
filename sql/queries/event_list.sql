-- Newest first, so LIMIT keeps the newest events; the store returns them
-- oldest first. Each filter is switched off by its own flag or empty
-- value, so one statement serves every combination.
SELECT {{template "event_columns"}}
FROM events
WHERE (:any_job OR job_id = :job_id)
  AND (:node = '' OR node = :node)
  AND (:any_since OR created_at >= :since)
  AND id > :after_id
ORDER BY id DESC
LIMIT :limit
