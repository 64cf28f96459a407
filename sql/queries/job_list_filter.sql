-- The filters of a job listing (engine.JobListParams), shared by job_list
-- and job_count_by_status. Each is switched off by its own flag or empty
-- value, so one statement serves every combination.
(:all_statuses OR status IN (:statuses))
  AND {{template "job_list_filters"}}
