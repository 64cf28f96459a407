-- The children of a window of purge candidates (job_purge_candidates with a
-- limit). Those outside it keep their parent (engine.PurgeSelect).
SELECT id, parent_id
FROM jobs
WHERE parent_id IN (:ids)
