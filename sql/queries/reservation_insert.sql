INSERT INTO reservations (job_id, node)
VALUES (:job_id, :node)
