-- The insert of one job, without its RETURNING, which job_insert and the
-- versions of it for each dialect end as their database can.
INSERT INTO jobs (type, operation, args, payload, job_load, status, job_key, parent_id, max_attempts,
                  backoff_seconds, rollback, run_after, timeout_seconds, creator, created_at, queued_at,
                  rollback_type, key_position, rollback_of, priority, memory_limit)
VALUES (:type, :operation, :args, :payload, :load, :status, :job_key, :parent_id, :max_attempts,
        :backoff_seconds, :rollback, :run_after, :timeout_seconds, :creator, {{now}},
        CASE WHEN :queued THEN {{now}} END, :rollback_type, :key_position, :rollback_of, :priority, :memory_limit)
