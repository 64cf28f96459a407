id, type, job_load, status, node, job_key, parent_id, attempt, version, priority
