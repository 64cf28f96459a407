{{- /*
A fragment of job_list_filter and of job_list for live jobs: the filters
other than status, each switched off by its own flag, so one statement
serves every combination. The creation window's ends are inclusive; the
store binds them at the stored precision (see windowArg). The ids' bounds
are always bound (0 and the largest id when open), so every backend can
read a range of ids through the primary key. A double fault is a job
whose rollback job ended FAILED, found by the primary key; oom_killed
keeps the jobs whose last ended attempt was killed at its memory limit.
*/ -}}
(:all_types OR type IN (:types))
  AND (:node = '' OR node = :node)
  AND (:job_key = '' OR job_key = :job_key)
  AND (:any_parent OR parent_id = :parent_id)
  AND (:any_parents OR parent_id IN (:parent_ids))
  AND (NOT :roots OR parent_id IS NULL)
  AND (:creator = '' OR creator = :creator)
  AND (:any_priority_min OR priority >= :priority_min)
  AND (:any_priority_max OR priority <= :priority_max)
  AND (:any_created_after OR created_at >= :created_after)
  AND (:any_created_before OR created_at <= :created_before)
  AND id >= :min_id AND id <= :max_id
  AND (NOT :oom_killed OR oom_killed = TRUE)
  AND (NOT :double_fault OR EXISTS (SELECT 1 FROM jobs rb
                                    WHERE rb.id = jobs.rollback_job_id AND rb.status = 'FAILED'))
