-- Many jobs in one statement. The store repeats the row (job_insert_row)
-- after VALUES once per job, comma-separated. The ids come back in no
-- promised order; they ascend with the rows, so the store sorts them.
INSERT INTO jobs (type, operation, args, payload, job_load, status, job_key, parent_id, max_attempts,
                  backoff_seconds, rollback, run_after, timeout_seconds, creator, created_at, queued_at,
                  rollback_type, priority, memory_limit)
VALUES {{template "job_insert_row"}}
RETURNING id
