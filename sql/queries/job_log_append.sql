INSERT INTO job_logs (job_id, attempt, stream, data, created_at)
VALUES (:job_id, :attempt, :stream, :data, {{now}})
