SELECT status, COUNT(*) AS n
FROM jobs
WHERE {{template "job_list_filter"}}
GROUP BY status
