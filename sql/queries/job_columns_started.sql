id, type, operation, args, payload, job_load, status, node, job_key, parent_id, attempt, max_attempts, attempt_base,
backoff_seconds, timeout_seconds, version, priority, memory_limit, {{template "job_waited"}} AS waited_seconds
