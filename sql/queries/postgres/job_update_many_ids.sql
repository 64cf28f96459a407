-- job_update_many_set, returning only the ids of the rows it changed, as
-- one array (NULL for none), for a caller that needs no job back (a node
-- recording results), and notifying the dispatchers itself
-- (jobs_changed_notify). One array is one value for the node to read, not
-- a row of its own for each job.
WITH j AS (
    {{template "job_update_many_set"}}
    RETURNING id, status
)
SELECT array_agg(id ORDER BY id) AS ids FROM j WHERE {{template "jobs_changed_notify"}}
