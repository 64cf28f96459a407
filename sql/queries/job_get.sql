SELECT {{template "job_columns"}}
FROM jobs
WHERE id = :id
