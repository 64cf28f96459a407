-- The children of the candidates. Those that are no candidate themselves
-- keep their parent (engine.PurgeSelect).
SELECT id, parent_id
FROM jobs
WHERE parent_id IN (SELECT id FROM jobs WHERE {{template "job_purge_filter"}})
