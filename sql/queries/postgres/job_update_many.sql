-- job_update_many_set, returning the rows it changed.
{{template "job_update_many_set"}}
RETURNING {{template "job_columns"}}
