-- The job a node is kept for, if any.
SELECT job_id
FROM reservations
WHERE node = :node
