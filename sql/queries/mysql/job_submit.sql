-- job_submit for MySQL, which has no INSERT … RETURNING. The driver gives
-- the new id, and job_submit_offered says whether a node offers the type.
INSERT INTO jobs (type, operation, args, payload, job_load, status, job_key, parent_id, max_attempts,
                  backoff_seconds, rollback, run_after, timeout_seconds, creator, created_at, queued_at,
                  rollback_type)
SELECT :type, :operation, :args, :payload,
       CASE WHEN :service_load AND svc.svc_load > 0 THEN svc.svc_load ELSE :load END,
       :status, :job_key, :parent_id, :max_attempts, :backoff_seconds, :rollback,
       CASE WHEN :run_in THEN {{nowPlus ":run_in_seconds"}} ELSE :run_after END,
       CASE WHEN :service_timeout AND svc.svc_timeout_seconds > 0 THEN svc.svc_timeout_seconds ELSE :timeout_seconds END,
       :creator, {{now}}, CASE WHEN :queued THEN {{now}} END, :rollback_type
FROM (SELECT 1 AS one) AS one
LEFT JOIN ({{template "job_submit_service"}}) AS svc ON TRUE
WHERE COALESCE(svc.old_form, 0) = 0
