INSERT INTO jobs (type, operation, args, payload, job_load, status, job_key, parent_id, max_attempts,
                  backoff_seconds, rollback, run_after, timeout_seconds, creator, created_at, queued_at)
VALUES (:type, :operation, :args, :payload, :load, :status, :job_key, :parent_id, :max_attempts,
        :backoff_seconds, :rollback, :run_after, :timeout_seconds, :creator, {{now}},
        CASE WHEN :queued THEN {{now}} END)
RETURNING id
