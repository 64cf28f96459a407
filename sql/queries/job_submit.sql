-- One job with the defaults the registered nodes give its type, in one
-- statement (engine.Store, JobSubmit). job_submit_service picks the
-- service as engine.ServiceDefaults does (an ONLINE node's, else any
-- node's, the first by name), its load and timeout stand in where the job
-- asks for them, a delay counts from the database clock, and offered says
-- whether any node offers the type. A service stored by a release that
-- kept its timeout as text only (old_form) makes the statement insert
-- nothing, and the store then reads the nodes and inserts as JobInsert does.
WITH svc AS ({{template "job_submit_service"}})
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
LEFT JOIN svc ON 1 = 1
WHERE COALESCE(svc.old_form, 0) = 0
RETURNING id, EXISTS (SELECT 1 FROM svc) AS offered
