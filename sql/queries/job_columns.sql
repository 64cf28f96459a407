id, type, operation, args, payload, job_load, status, node, job_key, parent_id, attempt, max_attempts, attempt_base,
backoff_seconds, rollback, run_after, timeout_seconds, progress, progress_message, exit_code, message,
version, creator, created_at, queued_at, started_at, finished_at, dispatcher, lease_term, key_position,
rollback_type, rollback_job_id, rollback_of, priority, memory_limit, cpu_seconds, peak_memory, wall_seconds, oom_killed
