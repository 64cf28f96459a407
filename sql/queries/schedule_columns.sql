name, cron, tz, overlap, paused, job, next_fire_at, last_job_id, creator, created_at, updated_at
