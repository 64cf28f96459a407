-- job_submit for MySQL, which has no INSERT … RETURNING. The driver gives
-- the new id; the store then records the submit's event
-- (event_append_jobs) and reads what the nodes offer the type
-- (job_submit_offered), in the same transaction.
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
LEFT JOIN (SELECT * FROM ({{template "job_submit_offers"}}) AS offers ORDER BY online DESC, name LIMIT 1) AS svc ON TRUE
WHERE COALESCE(svc.old_form, 0) = 0
  AND (:no_parent OR EXISTS (SELECT 1 FROM jobs p WHERE p.id = :parent_id))
