{{template "job_insert_values"}}
RETURNING id
