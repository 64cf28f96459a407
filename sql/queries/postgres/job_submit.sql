-- job_submit for PostgreSQL, whose WITH takes an INSERT, so the job and
-- the submit's event go in one statement and a plain submit needs no
-- transaction of its own. See job_submit for the rest; the event is the
-- one event_append_jobs would record for the new job. The statement
-- notifies the dispatchers itself (jobs_changed_notify).
WITH offers AS ({{template "job_submit_offers"}}),
svc AS (SELECT * FROM offers ORDER BY online DESC, name LIMIT 1),
j AS (
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
    LEFT JOIN svc ON TRUE
    WHERE COALESCE(svc.old_form, 0) = 0
      AND (:no_parent OR EXISTS (SELECT 1 FROM jobs p WHERE p.id = :parent_id))
    RETURNING id, type, job_load, status
),
e AS (
    INSERT INTO events (created_at, who, verb, job_id, node, type, schedule, detail, reason)
    SELECT {{now}}, :who, :verb, j.id, :node, j.type, :schedule, :detail, :reason
    FROM j
)
SELECT j.id, j.job_load,
       (SELECT COUNT(*) FROM offers) > 0 AS offered,
       (SELECT MAX(CASE WHEN online = 1 THEN max_load END) FROM offers) AS largest_max_load
FROM j
WHERE {{template "jobs_changed_notify"}}
