-- The filters of a job listing (engine.JobListParams), shared by job_list
-- and job_count_by_status. Each is switched off by its own flag or empty
-- value, so one statement serves every combination.
(:all_statuses OR status IN (:statuses))
  AND (:all_types OR type IN (:types))
  AND (:node = '' OR node = :node)
  AND (:job_key = '' OR job_key = :job_key)
  AND (:any_parent OR parent_id = :parent_id)
  AND (:creator = '' OR creator = :creator)
