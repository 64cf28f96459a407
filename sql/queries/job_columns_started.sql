id, type, operation, args, payload, job_load, status, node, job_key, parent_id, attempt, max_attempts, attempt_base,
backoff_seconds, timeout_seconds, version, priority, memory_limit, created_at, queued_at, run_after, started_at
