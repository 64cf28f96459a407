-- job_update_many_set for a node starting the jobs it took, returning of
-- each row it changed only what the node runs the job by.
{{template "job_update_many_set"}}
RETURNING {{template "job_columns_started"}}
