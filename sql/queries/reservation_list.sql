SELECT job_id, node
FROM reservations
ORDER BY job_id
