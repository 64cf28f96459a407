-- One job with the defaults the registered nodes give its type, in one
-- statement (engine.Store, JobSubmit); the store records the submit's
-- event after it in the same transaction (event_append_jobs). svc picks
-- the service as engine.ServiceDefaults does (an ONLINE node's, else any
-- node's, the first by name); its load, timeout and memory limit stand in
-- where the job asks for them, a delay counts from the database clock, and
-- what the nodes offer the type comes back with the id. A service stored
-- by a release that kept its timeout as text only (old_form), or a parent
-- that is not there, makes the statement insert nothing, and the store then
-- finds out which.
WITH offers AS ({{template "job_submit_offers"}}),
svc AS (SELECT * FROM offers ORDER BY online DESC, name LIMIT 1)
INSERT INTO jobs (type, operation, args, payload, job_load, status, job_key, parent_id, max_attempts,
                  backoff_seconds, rollback, run_after, timeout_seconds, creator, created_at, queued_at,
                  rollback_type, priority, memory_limit)
SELECT :type, :operation, :args, :payload,
       CASE WHEN :service_load AND svc.svc_load > 0 THEN svc.svc_load ELSE :load END,
       :status, :job_key, :parent_id, :max_attempts, :backoff_seconds, :rollback,
       CASE WHEN :run_in THEN {{nowPlus ":run_in_seconds"}} ELSE :run_after END,
       CASE WHEN :service_timeout AND svc.svc_timeout_seconds > 0 THEN svc.svc_timeout_seconds ELSE :timeout_seconds END,
       :creator, {{now}}, CASE WHEN :queued THEN {{now}} END, :rollback_type, :priority,
       CASE WHEN :service_memory AND svc.svc_memory > 0 THEN svc.svc_memory ELSE :memory_limit END
FROM (SELECT 1 AS one) AS one
LEFT JOIN svc ON 1 = 1
WHERE COALESCE(svc.old_form, 0) = 0
  AND (:no_parent OR EXISTS (SELECT 1 FROM jobs p WHERE p.id = :parent_id))
RETURNING id, job_load,
          (SELECT COUNT(*) FROM offers) > 0 AS offered,
          (SELECT MAX(CASE WHEN online = 1 THEN max_load END) FROM offers) AS largest_max_load
