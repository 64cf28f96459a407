id, created_at, who, verb, job_id, node, type, schedule, detail, reason
