SELECT seq, job_id, attempt, stream, data, created_at
FROM job_logs
WHERE job_id = :job_id AND seq > :after_seq
ORDER BY seq
LIMIT :limit
