-- The status and times of each job a listing with the same filters
-- (engine.JobListParams) would show, in no order and without a limit. A
-- benchmark reads its own jobs by it, a million of them after a long run,
-- where a listing would read and convert every column of each.
SELECT status, created_at, started_at, finished_at
FROM jobs
WHERE {{template "job_list_filter"}}
