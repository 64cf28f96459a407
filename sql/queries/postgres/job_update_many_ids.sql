-- job_update_many_set, returning only the ids of the rows it changed, for a
-- caller that needs no job back (a node recording results).
{{template "job_update_many_set"}}
RETURNING id
