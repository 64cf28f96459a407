SELECT seq, job_id, attempt, data, created_at
FROM job_logs
WHERE job_id = :job_id AND seq > :after_seq
ORDER BY seq
LIMIT :limit
