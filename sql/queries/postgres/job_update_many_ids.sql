-- job_update_many_set, returning only the ids of the rows it changed, for a
-- caller that needs no job back (a node recording results), and notifying
-- the dispatchers itself (jobs_changed_notify).
WITH j AS (
    {{template "job_update_many_set"}}
    RETURNING id, status
)
SELECT id FROM j WHERE {{template "jobs_changed_notify"}}
