INSERT INTO job_logs (job_id, attempt, data, created_at)
VALUES (:job_id, :attempt, :data, {{now}})
